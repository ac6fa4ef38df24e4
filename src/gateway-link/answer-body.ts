// Reading an answer a payment page's browser received, held at the Fetch domain's response stage, without ever
// holding more of it than a cap: the body is taken as a stream (Fetch.takeResponseBodyAsStream) and read in
// chunks, so a 150 MB answer costs this process the cap and Chromium a few buffers, never the whole. A body
// within the cap is handed back to the page unchanged (fulfilled); one over it is failed, and the page gets a
// network error. `Fetch.getResponseBody` would have read the whole body into Chromium and then into this process.

import type { CDPSession, Protocol } from "puppeteer-core";

/** An API answer of a link page (list-payment-options, a status poll): a few KB in real life. */
export const ANSWER_MAX_BYTES = 64 * 1024;
/** A document or worker script of a link page, read to add the connect-src policy (chromium.ts). */
export const DOCUMENT_MAX_BYTES = 4 * 1024 * 1024;

/** At most this much per IO.read (Chromium gives what it has): one or two reads for an API answer. */
const CHUNK_BYTES = 64 * 1024;

export type CappedBody = { ok: true; body: Buffer } | { ok: false; read: number };

/** Reads a paused response's body up to `maxBytes`; past it, stops reading (`ok: false`). Throws on CDP errors. */
export async function readCappedBody(cdp: CDPSession, requestId: string, maxBytes: number): Promise<CappedBody> {
  const { stream } = await cdp.send("Fetch.takeResponseBodyAsStream", { requestId });
  const chunks: Buffer[] = [];
  let read = 0;
  try {
    for (;;) {
      const r = await cdp.send("IO.read", { handle: stream, size: CHUNK_BYTES });
      const chunk = r.base64Encoded ? Buffer.from(r.data, "base64") : Buffer.from(r.data, "utf8");
      read += chunk.length;
      if (read > maxBytes) return { ok: false, read };
      chunks.push(chunk);
      if (r.eof) return { ok: true, body: Buffer.concat(chunks) };
    }
  } finally {
    await cdp.send("IO.close", { handle: stream }).catch(() => undefined);
  }
}

/** The answer's headers without those that described the encoded body (the stream gives it decoded). */
export function decodedHeaders(event: Protocol.Fetch.RequestPausedEvent): Protocol.Fetch.HeaderEntry[] {
  return (event.responseHeaders ?? []).filter(
    (h) => !/^(content-length|content-encoding|transfer-encoding)$/i.test(h.name),
  );
}

/** Hands a body read with readCappedBody() back to the page, with the answer's own status and headers. */
export function fulfillWith(
  cdp: CDPSession,
  event: Protocol.Fetch.RequestPausedEvent,
  body: Buffer,
  headers: Protocol.Fetch.HeaderEntry[] = decodedHeaders(event),
): Promise<unknown> {
  return cdp.send("Fetch.fulfillRequest", {
    requestId: event.requestId,
    responseCode: event.responseStatusCode ?? 200,
    responseHeaders: headers,
    body: body.toString("base64"),
  });
}

/** Fails a held request inside Chromium: the page sees a network error. */
export function refuseRequest(cdp: CDPSession, requestId: string): Promise<unknown> {
  return cdp.send("Fetch.failRequest", { requestId, errorReason: "BlockedByClient" }).catch(() => undefined);
}

/** "64 KB", "4 MB": how a cap is named in errors. */
export function sizeName(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MB` : `${bytes / 1024} KB`;
}
