// One demo data directory per test run. A first start on an empty DATA_DIR initialises and migrates the embedded
// PostgreSQL (in WebAssembly) and seeds the demo tenant: 12–14 CPU-seconds and 9–11 s to ready on a slow 2-core
// machine, where a start on a data directory that has been through it takes 5 CPU-seconds and 4 s. So the first test
// of a run that wants a demo makes this directory once (a real start, then a clean stop), and the later demos start
// on copies of it: the path `npm start` takes the second time. Tests whose subject is the first start itself (the
// newcomer's zero-setup path, the embedded database's own files) start on an empty directory.

import { cpSync, existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EMBEDDED_START_MS } from "./app.js";
import { ARTIFACTS, freePort, ServiceProcess } from "./cluster.js";
import { waitFor } from "./wait.js";

/** Where this run's demo data directory lives (global-teardown.ts removes it), or null outside jest's global setup. */
export function demoTemplateRoot(): string | null {
  const run = process.env.PQR_TEST_TEMPLATE;
  return run === undefined ? null : join(tmpdir(), `${run}-demo`);
}

/**
 * Fills `dataDir` (empty) with a copy of this run's demo data directory, making that on first use; returns false
 * (leaving `dataDir` empty, for a first start) where there is none: a file run outside jest's global setup, or a
 * run whose making of it failed.
 */
export async function copyDemoTemplate(dataDir: string): Promise<boolean> {
  const root = demoTemplateRoot();
  if (root === null) return false;
  const data = join(root, "data");
  const ready = join(root, "ready");
  const failed = join(root, "failed");
  if (!existsSync(ready) && !existsSync(failed)) {
    let mine = true;
    try {
      mkdirSync(root);
    } catch {
      mine = false;
    }
    // One maker per run (the mkdir is atomic); the other workers wait for its word.
    if (mine)
      await make(data).then(
        () => writeFileSync(ready, ""),
        (err: unknown) => writeFileSync(failed, String(err)),
      );
    else
      await waitFor(() => existsSync(ready) || existsSync(failed), EMBEDDED_START_MS, 100, "the demo data directory");
  }
  if (!existsSync(ready)) return false;
  cpSync(data, dataDir, { recursive: true });
  return true;
}

/**
 * The demo service process, not started yet: `node dist/src/main.js serve` on loopback with nothing else set, its log
 * under test/artifacts/demo/. `openFiles`: its descriptor limit (see ServiceProcess).
 */
export async function demoProcess(name: string, limits: { openFiles?: number } = {}): Promise<ServiceProcess> {
  const logDir = join(ARTIFACTS, "..", "demo");
  mkdirSync(logDir, { recursive: true });
  return new ServiceProcess(
    name,
    "serve",
    await freePort(),
    () => ({ HOST: "127.0.0.1", LOG_LEVEL: "warn" }),
    logDir,
    limits,
  );
}

async function make(data: string): Promise<void> {
  const first = await demoProcess("demo-template");
  try {
    await first.start();
    await first.stop();
    if (first.exit?.code !== 0) throw new Error(`the first demo start stopped with ${JSON.stringify(first.exit)}`);
    renameSync(first.dataDir, data);
  } finally {
    await first.dispose();
  }
}
