// `npm run bench`: every section in order, printed as markdown; a full run also writes bench/results.md.
// BENCH_QUICK=1 runs a ~1–2 minute smoke of the same sections (figures not meaningful, nothing written).
// --only=NAME[,NAME…] runs only the sections whose name contains one of them (codec, load, graphql-rest, embedded load,
// link time to QR, link payway, link late watch, events, floods, lifecycle, startup, export, libs: graphql-armor, libs: lru-cache, libs: zod and envalid), e.g. `npm run bench -- --only=floods`; nothing is written then either.
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { toMarkdown, type Section } from "./table.js";
import { benchCodecSection } from "./codec.js";
import { benchLoad } from "./load.js";
import { benchGraphqlRest } from "./graphql-rest.js";
import { benchLinkQrSection } from "./link-qr.js";
import { benchLinkPaywaySection } from "./link-payway.js";
import { benchLinkLateSection } from "./link-late.js";
import { benchEvents } from "./events.js";
import { benchStartup } from "./startup.js";
import { benchEmbedded } from "./embedded.js";
import { benchFlood } from "./flood.js";
import { benchLifecycle } from "./lifecycle.js";
import { benchExportSection } from "./export.js";
import { benchArmorSection } from "./libs-armor.js";
import { benchLruSection } from "./libs-lru.js";
import { benchConfigSection } from "./libs-config.js";

const quick = process.env.BENCH_QUICK === "1";
const only = process.argv
  .find((a) => a.startsWith("--only="))
  ?.slice("--only=".length)
  .split(",")
  .filter((x) => x !== "");
const log = (line: string) => console.error(`  ${line}`);

function machine(loadBefore: number): string[] {
  const n = cpus().length;
  const loadAfter = loadavg()[0];
  const lines = [
    `- date: ${new Date().toISOString()}`,
    `- machine: ${n} CPUs (${cpus()[0]?.model.trim() ?? "unknown CPU"}), Node ${process.version}`,
    `- 1-minute load average: ${loadBefore.toFixed(2)} at the start, ${loadAfter.toFixed(2)} at the end`,
  ];
  // Judged at the start: by the end the bench's own processes are in the average.
  if (loadBefore > n / 2) {
    lines.push(
      `- **The machine was shared**: other processes kept the load average above ${n / 2} (half the CPUs) before the run, so throughput figures are low and noisy; the CPU-per-request columns are the steadier ones.`,
    );
  }
  return lines;
}

async function main(): Promise<void> {
  const loadBefore = loadavg()[0];
  const started = Date.now();
  const sections: Section[] = [];
  // A section that fails is reported as such and the run goes on: one broken section must not hide the rest.
  const run = async (name: string, fn: () => Promise<Section | Section[]>) => {
    if (only && !only.some((o) => name.includes(o))) return;
    console.error(`# ${name}${quick ? " (quick)" : ""}`);
    const t = Date.now();
    let out: Section | Section[];
    try {
      out = await fn();
    } catch (err) {
      process.exitCode = 1;
      out = {
        title: `${name}: FAILED`,
        columns: ["section", "result"],
        rows: [[name, "failed"]],
        notes: [`Error: ${(err as Error).message}`],
      };
    }
    for (const s of Array.isArray(out) ? out : [out]) {
      sections.push(s);
      console.log(toMarkdown(s));
    }
    console.error(`  (${Math.round((Date.now() - t) / 1000)} s)`);
  };
  await run("codec", () => benchCodecSection());
  await run("load", () => benchLoad({ quick, log }));
  // Issue 39: the same operations over REST and GraphQL in one run (`--only=graphql-rest`).
  await run("graphql-rest", () => benchGraphqlRest({ quick, log }));
  // The embedded rows beside the PostgreSQL ones of the same run.
  const postgres = new Map<string, number>();
  for (const row of sections.find((x) => x.title.startsWith("Load:"))?.rows ?? [])
    postgres.set(String(row[0]), Number(row[2]));
  await run("embedded load", () => benchEmbedded({ quick, log, postgres }));
  await run("link time to QR", () => benchLinkQrSection({ quick, log }));
  await run("link payway", () => benchLinkPaywaySection({ quick, log }));
  await run("link late watch", () => benchLinkLateSection({ quick, log }));
  await run("events", () => benchEvents({ quick, log }));
  await run("floods", () => benchFlood({ quick, log }));
  await run("lifecycle", () => benchLifecycle({ quick, log }));
  await run("startup", () => benchStartup({ quick, log }));
  await run("export", () => benchExportSection({ quick, log }));
  // Hand-written code beside the library that could replace it (issue 38 item 8): `--only=libs`.
  await run("libs: graphql-armor", () => benchArmorSection());
  await run("libs: lru-cache", () => benchLruSection());
  await run("libs: zod and envalid", async () => benchConfigSection());
  console.error(`# done in ${Math.round((Date.now() - started) / 1000)} s`);
  if (quick || only) return;
  const out = fileURLToPath(new URL("../../bench/results.md", import.meta.url));
  const doc = [
    "# Benchmark results",
    "",
    "Written by `npm run bench` (a full run).",
    "",
    ...machine(loadBefore),
    "",
    ...sections.map(toMarkdown),
  ].join("\n");
  writeFileSync(out, doc);
  console.error(`wrote ${out}`);
}

await main();
