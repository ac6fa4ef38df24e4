/**
 * The gateway's QR image templates: what its QR API accepts as qr_image_template. [QR] the "QR API" page's
 * request-body table (required, at most 20 characters, one of this list); [SBX] a public SDK's sandbox probes
 * (docs/SANDBOX-FINDINGS.md §7a) generated a QR with each of the ten and saw any other value refused with HTTP 400.
 * One list for the service's own check (gateway/gateway-rules.ts) and the simulator's (simulators/gateway/rules.ts).
 */
export const QR_IMAGE_TEMPLATES = [
  "template1",
  "template1_color",
  "template2",
  "template2_color",
  "template3_color",
  "template4",
  "template4_color",
  "template5",
  "template5_color",
  "template6_color",
] as const;
export type QrImageTemplate = (typeof QR_IMAGE_TEMPLATES)[number];

export function isQrImageTemplate(v: unknown): v is QrImageTemplate {
  return typeof v === "string" && (QR_IMAGE_TEMPLATES as readonly string[]).includes(v);
}
