import { describe, it, expect } from "@jest/globals";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer } from "node:net";
import { join } from "node:path";
import { createTestDatabase } from "../support/db.js";
import { ADMIN_TOKEN } from "../support/app.js";
import { waitFor } from "../support/wait.js";
import { statusOf } from "../support/http.js";
import { keepOutput, withOutput } from "../support/child-output.js";

describe("process shutdown", () => {
  it("SIGTERM stops a production serve process cleanly within seconds (exit code 0)", async () => {
    const db = await createTestDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), "pqr-shutdown-"));
    // A port free right now (the child binds it a moment later), so the test knows where to look.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const child = spawn(process.execPath, ["dist/src/main.js", "serve"], {
      env: {
        ...process.env,
        NODE_OPTIONS: "",
        NODE_ENV: "production",
        DATABASE_URL: db.url,
        PORT: String(port),
        HOST: "127.0.0.1",
        LOG_LEVEL: "warn",
        DATA_DIR: dataDir,
        ADMIN_TOKEN,
        SECRET_KEY: "test-secret-key-Hq4Zt8Wn2Xc6Lv9Rb3Mj7Pk5Ds1F",
        SIMULATORS: "false",
        NETWORK_API_URL: "http://127.0.0.1:9/network",
        GATEWAY_API_URL: "http://127.0.0.1:9/gateway",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output = keepOutput(child);
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      await withOutput(output, async () => {
        const ready = () => statusOf(`http://127.0.0.1:${port}/readyz`).catch(() => 0);
        await waitFor(async () => (await ready()) === 200, 30_000);
        const started = Date.now();
        child.kill("SIGTERM");
        expect(await exited).toBe(0);
        expect(Date.now() - started).toBeLessThan(10_000);
      });
    } finally {
      child.kill("SIGKILL");
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
