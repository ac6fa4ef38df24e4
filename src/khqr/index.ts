// KHQR (Cambodia's EMV merchant-presented payment QR) codec: pure functions over strings and
// plain objects; no I/O, no clock (verify takes nowMs), no imports from the rest of src.
export type { KhqrCurrency, KhqrDecoded, KhqrDecodeResult, KhqrFieldError, KhqrInput } from "./types.js";
export { KHQR_ERRORS, KhqrError, khqrErrorMessage } from "./errors.js";
export type { KhqrErrorName } from "./errors.js";
export { encodeKhqr } from "./encode.js";
export { decodeKhqr } from "./decode.js";
export { verifyKhqr } from "./verify.js";
export { validateKhqrInput } from "./validate-input.js";
export { formatKhqrAmount } from "./amount.js";
export { crc16, crcToHex } from "./crc.js";
export { MAX as KHQR_MAX } from "./rules.js";
