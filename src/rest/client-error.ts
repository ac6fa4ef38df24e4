import type { Socket } from "node:net";

/**
 * Requests that Node's HTTP parser refuses before any route sees them (a CR, LF or NUL inside a header
 * value, a header block over the limit, conflicting content-length) are answered with the documented
 * error body too, instead of Node's bare `400 Bad Request` without one (docs/api.md).
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
  lingerThenClose(socket);
}

/** What a lingering close reads and drops at most, and for how long, before the socket is cut. */
const LINGER_BYTES = 8 * 1024 * 1024;
const LINGER_MS = 2_000;

/**
 * A lingering close (as web servers do): the answer is sent and our side closed, but what the client is still
 * sending is read and dropped for a while. Closing a socket with unread data resets the connection, and a reset
 * makes the client's system drop our answer before the client reads it: a client sending a large body would see
 * a broken connection instead of the 400.
 */
function lingerThenClose(socket: Socket): void {
  let read = 0;
  // A reset, said as one: a plain destroy() here would be turned into one more lingering half-close by the
  // slow-reader watch (slow-readers.ts), which reads on without these bounds.
  const cutNow = () => void (socket.destroyed ? undefined : socket.resetAndDestroy());
  const cut = setTimeout(cutNow, LINGER_MS);
  cut.unref();
  socket.on("data", (chunk: Buffer) => {
    read += chunk.length;
    if (read > LINGER_BYTES) cutNow();
  });
  socket.once("close", () => clearTimeout(cut));
  socket.resume();
}
