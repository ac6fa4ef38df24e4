// The "bare express + single-INSERT baseline" of the load bench: express 5, express.json(), one pg Pool
// of the service's ORM pool size, one INSERT … RETURNING id per request, a JSON answer. Nothing else: no
// auth, no validation, no logging. It is the floor any real endpoint on this stack sits above.
//   DATABASE_URL=… PORT=… POOL_SIZE=10 node dist/bench/baseline-server.js
import express from "express";
import pg from "pg";
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
const server = app.listen(Number(process.env.PORT ?? 0), "127.0.0.1");
process.on("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  void pool.end().finally(() => process.exit(0));
});
