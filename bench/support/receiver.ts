import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { wallNow } from "./timing.js";

export interface Receiver {
  url: string;
  /** event id → arrival times (wall clock, when the whole body was in). */
  arrivals: Map<string, number[]>;
  badSignatures: number;
  close(): Promise<void>;
}

/** The signature check of the recipe in docs/webhooks.md: one of the `v1=` values is HMAC-SHA256(secret, `${timestamp}.${body}`). */
export function signedBy(secret: string, timestamp: string, signature: string, body: Buffer): boolean {
  const expected = Buffer.from(`v1=${createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest("hex")}`);
  return signature.split(" ").some((v) => v.length === expected.length && timingSafeEqual(Buffer.from(v), expected));
}

/** A real local HTTP webhook receiver answering 200, checking every signature. */
export async function startReceiver(secret: () => string): Promise<Receiver> {
  const rx: Receiver = { url: "", arrivals: new Map(), badSignatures: 0, close: async () => undefined };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = wallNow();
      const id = String(req.headers["x-event-id"]);
      if (
        !signedBy(
          secret(),
          String(req.headers["x-timestamp"]),
          String(req.headers["x-signature"]),
          Buffer.concat(chunks),
        )
      )
        rx.badSignatures++;
      const list = rx.arrivals.get(id);
      if (list) list.push(at);
      else rx.arrivals.set(id, [at]);
      res.statusCode = 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  rx.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/payments`;
  rx.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return rx;
}
