// The "bare express + single-INSERT baseline" of the load bench: express 5, express.json(), one pg Pool
// of the service's ORM pool size, one INSERT … RETURNING id per request, a JSON answer. Nothing else: no
// auth, no validation, no logging. It is the floor any real endpoint on this stack sits above.
// With GATEWAY_API_URL, also the hosted gateway's floor: POST /gateway-insert makes the one upstream call a
// hosted-gateway generate needs (the gateway's generate-qr, signed as the protocol wants, through the
// project's gateway client so the bytes on the wire are the same), then the INSERT.
//   DATABASE_URL=… PORT=… POOL_SIZE=10 [GATEWAY_API_URL=… GATEWAY_SIM_URL=…] node dist/bench/baseline-server.js
import { randomBytes } from "node:crypto";
import express from "express";
import pg from "pg";
import { createGatewayClient, type GatewayCredentials } from "../src/gateway/upstream-client.js";
import { DEFAULT_QR_IMAGE_TEMPLATE } from "../src/gateway/gateway-rules.js";
import { BASELINE_APP_NAME } from "./db-probe.js";

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.POOL_SIZE ?? 10),
  application_name: BASELINE_APP_NAME,
});
await pool.query(
  `create table if not exists bench_baseline (id bigserial primary key, body jsonb not null, created_at timestamptz not null default now())`,
);

const app = express();
app.disable("x-powered-by");
app.use(express.json({ limit: "64kb" }));
app.get("/healthz", (_req, res) => void res.json({ ok: true }));
app.post("/insert", async (req, res) => {
  try {
    const { rows } = await pool.query<{ id: string }>(`insert into bench_baseline (body) values ($1) returning id`, [
      JSON.stringify(req.body),
    ]);
    res.json({ id: rows[0].id });
  } catch {
    res.status(500).json({ error: "insert failed" });
  }
});
const gatewayUrl = process.env.GATEWAY_API_URL;
if (gatewayUrl) {
  const gateway = createGatewayClient({ baseUrl: gatewayUrl, timeoutMs: 10_000 });
  const cred: GatewayCredentials = {
    merchantId: `baseline_${randomBytes(4).toString("hex")}`,
    apiKey: randomBytes(16).toString("hex"),
  };
  // The simulated gateway learns the merchant as an operator's registration would.
  const reg = await fetch(`${process.env.GATEWAY_SIM_URL}/sim/gateway/merchants`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(cred),
  });
  if (!reg.ok) throw new Error(`gateway merchant registration: ${reg.status}`);
  let n = 0;
  app.post("/gateway-insert", async (req, res) => {
    try {
      const order = (req.body as { qrData: { amount: number; currency: "USD" | "KHR"; lifetime: number } }).qrData;
      const qr = await gateway.generateQr(cred, {
        tranId: `b${process.pid.toString(36)}${(n++).toString(36)}`,
        amount: order.amount.toFixed(2),
        currency: order.currency,
        lifetimeMinutes: order.lifetime,
        qrImageTemplate: DEFAULT_QR_IMAGE_TEMPLATE,
      });
      const { rows } = await pool.query<{ id: string }>(`insert into bench_baseline (body) values ($1) returning id`, [
        JSON.stringify({ order, qr: qr.qrString }),
      ]);
      res.json({ id: rows[0].id, qr: qr.qrString });
    } catch {
      res.status(500).json({ error: "gateway call or insert failed" });
    }
  });
}
const server = app.listen(Number(process.env.PORT ?? 0), "127.0.0.1");
process.on("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  void pool.end().finally(() => process.exit(0));
});
