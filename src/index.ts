/**
 * The library surface of the package, for webhook receivers written in TypeScript/JavaScript:
 * `import { verifyWebhook } from "payment-qr-service"`.
 */
export { verifyWebhook, signature, type VerifyWebhookOptions } from "./webhooks/signing.js";
