/**
 * What Apollo Sandbox opens with on /graphql (not in production): one example of each kind of operation, runnable
 * against the demo tenant once the headers hold a demo key (README "Apollo Sandbox"). The operations are checked
 * against the schema and run by test/graphql/sandbox.test.ts, so they cannot go stale.
 */
export const SANDBOX_DOCUMENT = `# Payment QR Service: example operations. Put a key of data/demo.json in the headers
# (x-api-key, x-auth-type: api-key), pick an operation, press Run.

# 1. Issue a QR (copy md5, transactionId and clientToken from the answer into the variables)
mutation GenerateQr($input: GenerateQrInput!) {
  generateQr(input: $input) {
    transactionId
    status
    expiredAt
    data { qr md5 }
    clientToken
    checkoutUrl
  }
}

# 2. Check it by md5 (pay it first with POST /sim/network/pay {"md5": "…"} to see SUCCESS)
query CheckQr($md5: String!) {
  qrTransaction(md5: $md5) {
    transactionId
    status
    expiredAt
    data { qr md5 }
  }
}

# 3. Follow it live over graphql-ws, authorised by the clientToken alone (the connection payload
#    {"clientToken": "ct_…"}, or the header Authorization: Bearer ct_…)
subscription WatchWithClientToken($transactionId: ID!) {
  transactionUpdated(transactionId: $transactionId) {
    id
    type
    transaction { status receiptUrl }
  }
}
`;

export const SANDBOX_VARIABLES = {
  input: { amount: 1.5, currency: 840, expiredAfter: 120000, meta: { orderRef: "A-1001" } },
  md5: "<data.md5 from GenerateQr>",
  transactionId: "<transactionId from GenerateQr>",
};

export const SANDBOX_HEADERS = { "x-api-key": "<keys.qr from data/demo.json>", "x-auth-type": "api-key" };
