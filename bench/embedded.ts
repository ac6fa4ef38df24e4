// The embedded default under load: what `npm start` runs (no DATABASE_URL: PGlite behind the embedded
// server, demo tenant with its webhook endpoint, simulators and monitors in the process), with autocannon
// at 64 connections on /qr/generate and /qr/check. The PostgreSQL rows of the load section, from the same
// run, stand beside them.
//   npx tsc -p tsconfig.build.json && node dist/bench/embedded.js [--quick]
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { toMarkdown, type Section } from "./table.js";
import { cpuMs, freePort, serviceMain, spawnNode, waitReady } from "./proc.js";
import { AUTH, postJson } from "./tenant.js";
import { cannon } from "./load.js";
import type { CannonResult } from "./cannon.js";

const CONNECTIONS = 64;

export interface EmbeddedOptions {
  quick: boolean;
  log?: (line: string) => void;
  /** req/s of the same targets on PostgreSQL in this run (the load section), by target name. */
  postgres?: Map<string, number>;
}

const failed = (r: CannonResult) => r.non2xx + r.errors + r.badBodies;

export async function benchEmbedded(opts: EmbeddedOptions): Promise<Section> {
  const log = opts.log ?? (() => undefined);
  const durationS = opts.quick ? 3 : 30;
  const dataDir = mkdtempSync(join(tmpdir(), "pqr-bench-embedded-"));
  const port = await freePort();
  const service = spawnNode(serviceMain(), ["serve"], {
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    RATE_LIMIT_PER_MINUTE: "0",
  });
  const dir = mkdtempSync(join(tmpdir(), "pqr-cannon-"));
  try {
    const url = `http://127.0.0.1:${port}`;
    await waitReady(`${url}/readyz`, service, 120_000);
    const demo = JSON.parse(readFileSync(join(dataDir, "demo.json"), "utf8")) as { keys: { qr: string } };
    const auth = AUTH.qr(demo.keys.qr);
    const md5s: string[] = [];
    for (let i = 0; i < 200; i++) {
      md5s.push(
        (
          await postJson<{ data: { md5: string } }>(
            `${url}/qr/generate`,
            { amount: (100 + i) / 100, currency: 840, expiredAfter: 3_600_000 },
            auth,
          )
        ).data.md5,
      );
    }
    const targets = [
      {
        name: "POST /qr/generate",
        path: "/qr/generate",
        bodies: [1.5, 2.25, 10].map((amount) =>
          JSON.stringify({ amount, currency: 840, expiredAfter: 3_600_000, meta: { order: "{{n}}" } }),
        ),
      },
      { name: "POST /qr/check", path: "/qr/check", bodies: md5s.map((md5) => JSON.stringify({ md5 })) },
    ];
    const rows: (string | number)[][] = [];
    const notes: string[] = [];
    for (const t of targets) {
      const before = cpuMs(service.proc.pid as number);
      const r = await cannon(
        {
          url,
          path: t.path,
          headers: auth,
          bodies: t.bodies,
          expect: "json",
          connections: CONNECTIONS,
          durationS,
          warmupS: opts.quick ? 1 : 3,
        },
        dir,
      );
      const cpu = (cpuMs(service.proc.pid as number) - before) / Math.max(1, r.requests + r.warmupRequests);
      const pg = opts.postgres?.get(t.name);
      rows.push([
        t.name,
        CONNECTIONS,
        Math.round(r.rps),
        r.p50,
        r.p99,
        Math.round(cpu * 100) / 100,
        failed(r),
        pg === undefined ? "" : Math.round(pg),
        pg === undefined ? "" : `${((r.rps / pg) * 100).toFixed(0)}%`,
      ]);
      if (failed(r) > 0)
        notes.push(
          `FAILED requests on ${t.name}: status codes ${JSON.stringify(r.statusCodes)}, errors ${r.errors}, timeouts ${r.timeouts}; sample: ${r.sample ?? "(none)"}`,
        );
      log(
        `embedded ${t.name}: ${Math.round(r.rps)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, CPU ${cpu.toFixed(2)} ms/req, failed ${failed(r)}`,
      );
    }
    return {
      title: "Load on the embedded default (`npm start`: PGlite, demo tenant, simulators in the process)",
      columns: [
        "target",
        "conn.",
        "req/s",
        "p50 ms",
        "p99 ms",
        "CPU ms/req",
        "failed",
        "PostgreSQL req/s (load section)",
        "embedded / PostgreSQL",
      ],
      rows,
      notes: [
        `\`node dist/src/main.js serve\` with nothing configured but PORT and DATA_DIR (a fresh directory), LOG_LEVEL=warn, RATE_LIMIT_PER_MINUTE=0; autocannon in its own process, ${CONNECTIONS} connections for ${durationS} s after a warm-up. CPU ms/req is the whole process: PGlite runs inside it, so the database's work is in this figure (on PostgreSQL it is in a separate column).`,
        "The demo tenant's webhook endpoint (the built-in inbox) is subscribed to every event, so each generate also delivers a signed `payment.created` in the same process, and the QR monitor checks every pending QR: the work after the response is included.",
        "The PostgreSQL column is the load section's production-mode service on a PostgreSQL server (simulators in their own process, no webhook endpoint), from the same run.",
        ...notes,
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(
    toMarkdown(await benchEmbedded({ quick: process.argv.includes("--quick"), log: (line) => console.error(line) })),
  );
}
