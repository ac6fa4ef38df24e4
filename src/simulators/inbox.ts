import express, { type Router } from "express";

export interface InboxEntry {
  receivedAt: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * The built-in webhook receiver of demo mode: `POST /sim/inbox` stores what arrives (raw body kept
 * byte for byte, so signatures can be checked), `GET /sim/inbox` lists it, newest last.
 */
export class WebhookInbox {
  readonly entries: InboxEntry[] = [];
  private readonly max = 1000;

  router(): Router {
    const r = express.Router();
    r.post("/sim/inbox", express.raw({ type: () => true, limit: "1mb" }), (req, res) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers[k] = v;
      this.entries.push({
        receivedAt: new Date().toISOString(),
        headers,
        body: Buffer.isBuffer(req.body) ? req.body.toString("utf8") : "",
      });
      if (this.entries.length > this.max) this.entries.shift();
      res.status(204).end();
    });
    r.get("/sim/inbox", (_req, res) => void res.json(this.entries));
    return r;
  }
}
