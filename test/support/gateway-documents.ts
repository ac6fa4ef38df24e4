/**
 * The ten QR image templates the gateway's QR API page lists for `qr_image_template`, written out here from the
 * page (not taken from src/), so a test fails when the client's or the simulator's list drifts from the document.
 */
export const DOCUMENTED_QR_IMAGE_TEMPLATES = [
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
];
