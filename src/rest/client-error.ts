import type { Socket } from "node:net";

/**
 * Requests that Node's HTTP parser refuses before any route sees them (a CR, LF or NUL inside a header
 * value, a header block over the limit, conflicting content-length) are answered with the documented
 * error body too, instead of Node's bare `400 Bad Request` without one (README "API in brief").
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  // Node's own rule: never write into a socket that is gone or already carries a response.
  const inFlight = (socket as unknown as { _httpMessage?: { _headerSent?: boolean } })._httpMessage;
  if (err.code === "ECONNRESET" || !socket.writable || (inFlight && inFlight._headerSent)) {
    socket.destroy();
    return;
  }
  const [status, reason, message] =
    err.code === "HPE_HEADER_OVERFLOW"
      ? [431, "Request Header Fields Too Large", "Request headers are too large"]
      : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "Request Timeout", "The request was not received in time"]
        : [400, "Bad Request", "Malformed HTTP request"];
  const body = JSON.stringify({ error: { code: "BAD_USER_INPUT", message, details: [] } });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ` +
      `${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
