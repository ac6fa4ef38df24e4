// Start-up time: spawn → first 200 of GET /readyz, for `npm start` as the README's quick start runs it
// (a `tsc` build, then `node dist/src/main.js serve`) and for `node dist/src/main.js serve` alone, in both
// database modes: embedded (no DATABASE_URL; a fresh DATA_DIR = first start, then a second start on the
// same DATA_DIR) and the local PostgreSQL (a fresh database each time). Demo mode is on (the default outside
// production), as in the quick start. Median of 5 runs (quick: 2).
// Run alone: npx tsc -p tsconfig.build.json && node dist/bench/startup.js [--quick]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { median, toMarkdown, type Section } from "./table.js";
import { createBenchDb } from "./support/pg.js";
import { PROJECT_ROOT, baseEnv, freePort, startService, waitStartedLog } from "./support/service.js";
import { loadNote, wallNow } from "./support/timing.js";

type Command = "npm start" | "serve";
type Mode =
  "embedded, first start (fresh DATA_DIR)" | "embedded, second start (same DATA_DIR)" | "PostgreSQL (fresh database)";
const MODES: Mode[] = [
  "embedded, first start (fresh DATA_DIR)",
  "embedded, second start (same DATA_DIR)",
  "PostgreSQL (fresh database)",
];
const COMMANDS: Record<Command, string[]> = {
  "npm start": ["npm", "start"],
  serve: [process.execPath, "dist/src/main.js", "serve"],
};

interface Sample {
  readyMs: number;
  /** spawn → the "service started" log line, which main.ts writes after seeding the demo tenant. */
  seededMs: number | null;
}

/** One start: spawn, wait for /readyz 200 and the demo tenant, then SIGTERM and wait until every process is gone. */
async function startOnce(command: Command, env: Record<string, string>): Promise<Sample> {
  const s = await startService({
    command: COMMANDS[command],
    env: { ...baseEnv(), ...env },
    port: await freePort(),
    readyTimeoutMs: 180_000,
  });
  try {
    const seededMs = await waitStartedLog(s);
    return { readyMs: s.readyMs, seededMs };
  } finally {
    await s.stop();
  }
}

/** Wall time of one command run to completion in the project root. */
function timeCommand(argv: string[]): Promise<number> {
  const t0 = wallNow();
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { cwd: PROJECT_ROOT, env: baseEnv(), stdio: "ignore" });
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve(wallNow() - t0) : reject(new Error(`${argv.join(" ")} exited with ${code}`)),
    );
  });
}

async function sampleRound(command: Command, samples: Map<string, Sample[]>): Promise<void> {
  const add = (mode: Mode, s: Sample) =>
    samples.set(`${mode}|${command}`, [...(samples.get(`${mode}|${command}`) ?? []), s]);
  const dataDir = mkdtempSync(join(tmpdir(), "pqr-startup-"));
  try {
    add(MODES[0], await startOnce(command, { DATA_DIR: dataDir }));
    add(MODES[1], await startOnce(command, { DATA_DIR: dataDir }));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  const db = await createBenchDb("startup");
  const pgDir = mkdtempSync(join(tmpdir(), "pqr-startup-"));
  try {
    add(MODES[2], await startOnce(command, { DATABASE_URL: db.url, DATA_DIR: pgDir }));
  } finally {
    await db.drop();
    rmSync(pgDir, { recursive: true, force: true });
  }
}

const sec = (ms: number) => Math.round(ms / 100) / 10;
const range = (xs: number[]) => `${sec(Math.min(...xs))}–${sec(Math.max(...xs))}`;

export async function benchStartup(opts: { quick: boolean; log?: (line: string) => void }): Promise<Section> {
  const log = opts.log ?? (() => undefined);
  const runs = opts.quick ? 2 : 5;
  const loadBefore = loadavg()[0];
  const samples = new Map<string, Sample[]>();
  const builds: number[] = [];
  for (let r = 0; r < runs; r++) {
    // Alternate the commands within a round, so drifting load on a shared machine hits both alike.
    for (const command of (r % 2 ? ["serve", "npm start"] : ["npm start", "serve"]) as Command[]) {
      await sampleRound(command, samples);
      log(`startup round ${r + 1}/${runs}: ${command} done`);
    }
    builds.push(await timeCommand(["npm", "run", "build", "--silent"]));
  }
  const incremental = await incrementalBuildMs();
  const ready = (mode: Mode, c: Command) => (samples.get(`${mode}|${c}`) ?? []).map((s) => s.readyMs);
  const seeded = (mode: Mode, c: Command) =>
    (samples.get(`${mode}|${c}`) ?? []).flatMap((s) => (s.seededMs === null ? [] : [s.seededMs]));
  const rows = MODES.map((m) => {
    const npm = median(ready(m, "npm start"));
    const serve = median(ready(m, "serve"));
    return [m, sec(npm), sec(serve), sec(npm - serve), sec(median(seeded(m, "serve")))];
  });
  return {
    title: "Start-up: spawn → first 200 of GET /readyz (seconds, median)",
    columns: [
      "database",
      "`npm start`",
      "`node dist/src/main.js serve`",
      "difference (the build)",
      "serve → demo seeded",
    ],
    rows,
    notes: [
      `Median of ${runs} runs per cell; each run spawns the command with the user's environment (no NODE_ENV, so demo mode and simulators are on, LOG_LEVEL info), polls /readyz every 10 ms, waits for the "service started" log line (written after the demo tenant is seeded, which happens after /readyz already answers 200), then SIGTERM.`,
      `Ranges (min–max s) — npm start: ${MODES.map((m) => range(ready(m, "npm start"))).join(" / ")}; serve: ${MODES.map((m) => range(ready(m, "serve"))).join(" / ")} (rows in table order).`,
      `\`npm start\` runs \`npm run build\` (\`tsc -p tsconfig.build.json\`, a full, non-incremental build) before the service: \`npm run build\` alone took ${sec(median(builds))} s (median of ${builds.length}); \`tsc -b\` with \`incremental: true\` and nothing changed takes ${sec(incremental)} s (it skips an up-to-date project).`,
      loadNote(loadBefore, loadavg()[0]),
      `The design's figure for the embedded first start is ~5 s. Embedded = PGlite in-process (a fresh DATA_DIR runs initdb and every migration); PostgreSQL = the local server on 127.0.0.1, a fresh database per run (migrations run each time).`,
    ],
  };
}

/**
 * The build `npm start` could run instead: `tsc -b` with incremental build info (a temporary config that
 * extends tsconfig.build.json). Times the run after a first full one, with nothing changed; the emitted
 * files are the same as `npm run build`'s.
 */
async function incrementalBuildMs(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "pqr-tsbuildinfo-"));
  const config = join(dir, "tsconfig.json");
  writeFileSync(
    config,
    JSON.stringify({
      extends: join(PROJECT_ROOT, "tsconfig.build.json"),
      compilerOptions: { incremental: true, tsBuildInfoFile: join(dir, "build.tsbuildinfo") },
    }),
  );
  const argv = [process.execPath, join(PROJECT_ROOT, "node_modules/typescript/bin/tsc"), "-b", config];
  try {
    await timeCommand(argv);
    return await timeCommand(argv);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const quick = process.argv.includes("--quick") || process.env.BENCH_QUICK === "1";
  const t0 = Date.now();
  console.log(
    toMarkdown(
      await benchStartup({
        quick,
        log: (line) => console.error(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${line}`),
      }),
    ),
  );
}
