import { describe, it, expect } from "@jest/globals";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ARTIFACTS, freePort, ServiceProcess } from "../support/cluster.js";
import { AUTH, post } from "../support/app.js";
import { waitFor } from "../support/wait.js";
import { statusOf } from "../support/http.js";

/**
 * The default a new user runs, for as long as a demo lasts: `node dist/src/main.js serve` with nothing
 * configured (embedded database, demo tenant whose webhook endpoint is the built-in inbox, simulators and
 * monitors in the process) under 10 minutes of mixed use by 16 clients at once. Before the embedded server
 * kept connections apart, every generate failed after about 3 minutes of this and a paid QR stayed PENDING
 * while /readyz said ok. EMBEDDED_SOAK_MS shortens the run for a quick local try.
 */
const SOAK_MS = Number(process.env.EMBEDDED_SOAK_MS ?? 10 * 60_000);
const CLIENTS = 16;

describe(`the embedded default under ${Math.round(SOAK_MS / 60_000)} minutes of mixed use`, () => {
  it(
    "answers every request, stays truthfully ready, and a QR paid at the end reaches SUCCESS",
    async () => {
      const logDir = join(ARTIFACTS, `embedded-soak-${new Date().toISOString().replace(/[:.]/g, "-")}`);
      mkdirSync(logDir, { recursive: true });
      // Nothing configured but where to listen: no DATABASE_URL, no NODE_ENV (what `npm start` runs).
      const service = new ServiceProcess(
        "embedded",
        "serve",
        await freePort(),
        () => ({ HOST: "127.0.0.1", LOG_LEVEL: "warn" }),
        logDir,
      );
      const { dataDir } = service;
      const url = service.url;
      try {
        await service.start(); // until /readyz answers 200
        expect(existsSync(join(dataDir, "demo.json"))).toBe(true);
        const demo = JSON.parse(readFileSync(join(dataDir, "demo.json"), "utf8")) as {
          keys: { qr: string; gateway: string; gatewayLink: string };
          adminToken: string;
        };
        const qrAuth = AUTH.qr(demo.keys.qr);
        // Issued now, paid only after the soak.
        const first = (
          await post(`${url}/qr/generate`, { amount: 7.77, currency: 840, expiredAfter: 3_600_000 }, qrAuth)
        ).body as { data: { md5: string } };

        const counts = new Map<string, number>();
        const bad: string[] = [];
        const note = (what: string, r: { status: number; body: unknown }) => {
          const k = `${what} ${r.status}`;
          counts.set(k, (counts.get(k) ?? 0) + 1);
          if (r.status >= 500 || r.status === 0) bad.push(`${k}: ${JSON.stringify(r.body).slice(0, 200)}`);
        };
        const md5s: string[] = [first.data.md5];
        const gateways: string[] = [];
        const until = Date.now() + SOAK_MS;
        let n = 0;
        const client = async (c: number) => {
          while (Date.now() < until && bad.length < 20) {
            const i = n++;
            const pick = i % 20;
            if (pick < 8) {
              const r = await post(
                `${url}/qr/generate`,
                {
                  amount: 1 + (i % 50) / 10,
                  currency: i % 2 ? 840 : 116,
                  expiredAfter: i % 3 ? 600_000 : 10_000,
                  meta: { i, c },
                },
                { ...qrAuth, ...(i % 7 === 0 ? { "idempotency-key": `soak-${i % 50}-${c}` } : {}) },
              );
              if (r.status === 409 || r.status === 400) note("qr/generate (idempotent replay)", r);
              else note("qr/generate", r);
              const md5 = (r.body as { data?: { md5?: string } }).data?.md5;
              if (md5) md5s.push(md5);
              if (md5 && i % 3 === 0) note("sim pay", await post(`${url}/sim/network/pay`, { md5 }));
            } else if (pick < 12) {
              note("qr/check", await post(`${url}/qr/check`, { md5: md5s[i % md5s.length] }, qrAuth));
            } else if (pick < 14) {
              const r = await post(
                `${url}/gateway/generate-qr`,
                { qrData: { orderId: `soak-${i}-${c}`, amount: 2, currency: "USD", lifetime: 10 } },
                AUTH.gateway(demo.keys.gateway),
              );
              note("gateway/generate-qr", r);
              const id = (r.body as { transactionId?: string }).transactionId;
              if (id) {
                gateways.push(id);
                if (i % 2 === 0)
                  note(
                    "sim gateway pay",
                    await post(`${url}/sim/gateway/pay`, {
                      tranId: `soak-${i}-${c}`,
                      outcome: i % 4 ? "APPROVED" : "DECLINED",
                    }),
                  );
              }
            } else if (pick < 15 && gateways.length > 0) {
              note(
                "gateway/check-status",
                await post(
                  `${url}/gateway/check-status`,
                  { transactionId: gateways[i % gateways.length] },
                  AUTH.gateway(demo.keys.gateway),
                ),
              );
            } else if (pick < 17) {
              note(
                "graphql transactions",
                await post(
                  `${url}/graphql`,
                  { query: "{ transactions(first: 20) { edges { node { id status } } } }" },
                  qrAuth,
                ),
              );
            } else if (pick < 18) {
              note(
                "admin",
                await post(
                  `${url}/graphql`,
                  {
                    query:
                      "{ transactions(first: 20) { edges { node { id status } } } webhookDeliveries(first: 20) { id state } }",
                  },
                  { authorization: `Bearer ${demo.adminToken}` },
                ),
              );
            } else {
              const r = await fetch(`${url}/readyz`);
              note("readyz", { status: r.status, body: await r.json() });
            }
          }
        };
        await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
        expect(bad).toEqual([]);
        expect([...counts.keys()].filter((k) => k.startsWith("readyz") && !k.endsWith(" 200"))).toEqual([]);
        expect(counts.get("qr/generate 200") ?? 0).toBeGreaterThan(100);

        await post(`${url}/sim/network/pay`, { md5: first.data.md5 });
        await waitFor(
          async () =>
            ((await post(`${url}/qr/check`, { md5: first.data.md5 }, qrAuth)).body as { status: string }).status ===
            "SUCCESS",
          30_000,
          500,
        );
        const inbox = (await (await fetch(`${url}/sim/inbox`)).json()) as { body: string }[];
        expect(inbox.some((e) => e.body.includes(first.data.md5) && e.body.includes("payment.completed"))).toBe(true);
        expect(await statusOf(`${url}/readyz`)).toBe(200);
      } catch (err) {
        throw new Error(
          `${(err as Error).message}\n--- service output (last part; all of it in ${logDir}) ---\n${service.tail(40)}`,
        );
      } finally {
        await service.dispose();
      }
    },
    SOAK_MS + 300_000,
  );
});
