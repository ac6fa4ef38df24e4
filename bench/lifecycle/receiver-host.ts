// The merchant's webhook receiver for the lifecycle bench, in a process of its own: answers 200 to every
// delivery, checks every signature with the recipe in docs/webhooks.md against the tenant's endpoint secrets, and notes
// when each delivery's body was whole (wall clock), by transaction and event type.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { serveRequests } from "../support/ipc.js";
import { signedBy } from "../support/receiver.js";
import { wallNow } from "../support/timing.js";

/** One delivery: [transactionId, event type, event id, arrivedAt]. */
export type Delivery = [string, string, string, number];

let secrets: string[] = [];
let deliveries: Delivery[] = [];
let badSignatures = 0;
let unreadable = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    const at = wallNow();
    const body = Buffer.concat(chunks);
    const ts = String(req.headers["x-timestamp"]);
    const sig = String(req.headers["x-signature"]);
    if (!secrets.some((s) => signedBy(s, ts, sig, body))) badSignatures++;
    try {
      const e = JSON.parse(body.toString("utf8")) as {
        id: string;
        type: string;
        data: { transaction: { transactionId: string } };
      };
      deliveries.push([e.data.transaction.transactionId, e.type, e.id, at]);
    } catch {
      unreadable++;
    }
    res.statusCode = 200;
    res.end();
  });
});
server.keepAliveTimeout = 30_000;

serveRequests(
  {
    async listen() {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/payments`;
    },
    secrets(req) {
      secrets = req.secrets as string[];
      return true;
    },
    /** Hands over (and forgets) the deliveries since the last drain, with the counts of bad ones so far. */
    drain() {
      const out = { deliveries, badSignatures, unreadable };
      deliveries = [];
      return out;
    },
  },
  async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  },
);
