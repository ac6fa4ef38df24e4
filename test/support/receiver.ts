import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  headers: Record<string, string>;
  body: string;
  at: number;
}

/** A real HTTP webhook receiver; `respond` decides each answer's status. */
export async function startReceiver(
  respond: (n: number, r: Received) => number = () => 200,
): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k] = v;
      const r = { headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() };
      received.push(r);
      res.statusCode = respond(received.length, r);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
