import { compact, pass, type RestRoute } from "../rest/route-table.js";

/** The generic QR area's four contract paths. */
export const QR_ROUTES: RestRoute[] = [
  {
    path: "/qr/generate",
    kind: "qr",
    document: `mutation($input: GenerateQrInput!) { generateQr(input: $input) { transactionId expiredAt status
      requestData { amount currency expiredAfter meta } data { qr md5 } clientToken } }`,
    variables: (b) => ({ input: b }),
    bodyVariable: "input",
    shape: compact("generateQr"),
  },
  {
    path: "/qr/check",
    kind: "qr",
    document: `query($md5: String!) { qrTransaction(md5: $md5) { transactionId status data { qr md5 } requestData {
      meta amount currency expiredAfter } expiredAt } }`,
    variables: (b) => b,
    shape: pass("qrTransaction"),
  },
  {
    path: "/qr/verify",
    kind: "qr",
    document: `query($qrData: String!) { verifyQr(qrData: $qrData) }`,
    variables: (b) => b,
    shape: pass("verifyQr"),
  },
  {
    path: "/qr/decode",
    kind: "qr",
    document: `query($qrData: String!) { decodeQr(qrData: $qrData) { status { code errorCode message } data } }`,
    variables: (b) => b,
    shape: pass("decodeQr"),
  },
];
