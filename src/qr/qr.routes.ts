import { compact, pass, type RestRoute } from "../rest/route-table.js";
import { QR_KEY } from "./area.js";
import { MD5 } from "./qr.types.js";

/** The generic QR area's four contract paths. */
export const QR_ROUTES: RestRoute[] = [
  {
    path: "/qr/generate",
    kind: QR_KEY.kind,
    document: `mutation($input: GenerateQrInput!) { generateQr(input: $input) { transactionId expiredAt status
      requestData { amount currency expiredAfter meta } data { qr md5 } clientToken checkoutUrl deeplink } }`,
    variables: (b) => ({ input: b }),
    bodyVariable: "input",
    shape: compact("generateQr"),
    doc: {
      summary: "Generate a KHQR payment QR",
      description: "Status PENDING until the network reports it paid, or it expires. Keep `transactionId` or `md5`.",
      errors: ["IDEMPOTENCY_CONFLICT"],
      example: { amount: 1.5, currency: 840, expiredAfter: 120000, meta: { orderRef: "A-1001" } },
    },
  },
  {
    path: "/qr/check",
    kind: QR_KEY.kind,
    document: `query($md5: String!) { qrTransaction(md5: $md5) { transactionId status data { qr md5 } requestData {
      meta amount currency expiredAfter } expiredAt } }`,
    variables: (b) => b,
    shape: pass("qrTransaction"),
    doc: {
      summary: "Check a generic QR by its md5",
      errors: ["NOT_FOUND"],
      example: { md5: "{{md5}}" },
      argBounds: { md5: MD5.schema },
    },
  },
  {
    path: "/qr/verify",
    kind: QR_KEY.kind,
    document: `query($qrData: String!) { verifyQr(qrData: $qrData) }`,
    variables: (b) => b,
    shape: pass("verifyQr"),
    doc: {
      summary: "Is this string a valid KHQR? (a bare boolean)",
      errors: [],
      example: { qrData: "{{qr}}" },
    },
  },
  {
    path: "/qr/decode",
    kind: QR_KEY.kind,
    document: `query($qrData: String!) { decodeQr(qrData: $qrData) { status { code errorCode message } data } }`,
    variables: (b) => b,
    shape: pass("decodeQr"),
    doc: {
      summary: "Decode a KHQR string into its fields (parse failures are reported in the body)",
      errors: [],
      example: { qrData: "{{qr}}" },
    },
  },
];
