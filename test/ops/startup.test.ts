import { describe, it, expect } from "@jest/globals";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { createTestDatabase } from "../support/db.js";
import { ADMIN_TOKEN, AUTH, EMBEDDED_START_MS, post } from "../support/app.js";
import { copyDemoTemplate } from "../support/demo-template.js";
import { waitFor } from "../support/wait.js";
import { statusOf } from "../support/http.js";
import { keepOutput } from "../support/child-output.js";
import { ConfigError, loadConfig } from "../../src/config.js";
import { createApp, MODULES } from "../../src/app.js";

/** Start-up as an operator meets it: `node dist/src/main.js serve` with one thing wrong. */
const PROD = {
  NODE_ENV: "production",
  HOST: "127.0.0.1",
  LOG_LEVEL: "warn",
  ADMIN_TOKEN,
  SECRET_KEY: "test-secret-key-Hq4Zt8Wn2Xc6Lv9Rb3Mj7Pk5Ds1F",
  SIMULATORS: "false",
  NETWORK_API_URL: "http://127.0.0.1:9/network",
  GATEWAY_API_URL: "http://127.0.0.1:9/gateway",
};

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

/**
 * Runs the service (`args`: its command, `serve` unless said) until it exits (or 60 s); returns its exit code and
 * what it wrote to stderr and stdout.
 */
function run(
  env: Record<string, string>,
  timeoutMs = 60_000,
  args: string[] = ["serve"],
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, ["dist/src/main.js", ...args], {
    env: { ...process.env, NODE_OPTIONS: "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let stdout = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    }),
  );
}

/**
 * The message of the ConfigError `f` throws (what commands.ts prints after "Configuration error: "); fails otherwise.
 */
function configRefusal(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error("no ConfigError");
}

/** One line that says what is wrong and what to do; no stack trace. */
function expectOneClearLine(stderr: string, ...mentions: RegExp[]): void {
  const lines = stderr
    .trim()
    .split("\n")
    .filter((l) => l.trim() !== "");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^Start-up failed: /);
  expect(stderr).not.toMatch(/\n\s+at /);
  for (const m of mentions) expect(lines[0]).toMatch(m);
}

describe("start-up failures are one clear line and a non-zero exit", () => {
  // The rule is loadConfig's: each weak token is refused in-process with the line commands.ts prints; one of them goes
  // through a real start, which shows that line is all the operator sees (and the exit code).
  const WEAK_TOKEN =
    /^ADMIN_TOKEN is too weak \(.+\); use 32 random bytes \(`openssl rand -base64 32`, or `node -e [^`]+`\)$/;
  it.each([
    "aaaaaaaaaaaaaaaa",
    "password12345678password12345678",
    "abcdefghijklmnopqrstuvwxyz0123456789",
    "ThisIsMyAdminTokenForProduction2026!!",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", // the SHA-256 of ""
  ])("a weak production ADMIN_TOKEN (%s) is refused: why and how to make one (none printed)", (weak) => {
    const refusal = configRefusal(() => loadConfig({ ...PROD, ADMIN_TOKEN: weak, PORT: "4000" }, null));
    expect(refusal).toMatch(WEAK_TOKEN);
    expect(refusal).not.toContain(weak);
  });

  it("a weak ADMIN_TOKEN stops a real start with that one line and a non-zero exit", async () => {
    const r = await run({ ...PROD, ADMIN_TOKEN: "aaaaaaaaaaaaaaaa", PORT: String(await freePort()) });
    expect(r.code).not.toBe(0);
    const lines = r.stderr.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("npm "));
    expect(lines).toHaveLength(1);
    expect(lines[0]?.replace(/^Configuration error: /, "")).toMatch(WEAK_TOKEN);
    expect(lines[0]).toMatch(/^Configuration error: /);
  });

  it("production without DATABASE_URL is refused unless EMBEDDED_IN_PRODUCTION=1, which starts with a warning", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pqr-startup-"));
    try {
      const refused = await run({ ...PROD, PORT: String(await freePort()), DATA_DIR: dataDir });
      expect(refused.code).not.toBe(0);
      const lines = refused.stderr.split("\n").filter((l) => l.trim() !== "");
      expect(lines).toEqual([
        expect.stringMatching(/^Configuration error: DATABASE_URL is required .*EMBEDDED_IN_PRODUCTION=1/),
      ]);
      const port = await freePort();
      const child = spawn(process.execPath, ["dist/src/main.js", "serve"], {
        env: {
          ...process.env,
          NODE_OPTIONS: "",
          ...PROD,
          EMBEDDED_IN_PRODUCTION: "1",
          PORT: String(port),
          DATA_DIR: dataDir,
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const output = keepOutput(child);
      try {
        const healthy = () => statusOf(`http://127.0.0.1:${port}/healthz`).catch(() => 0);
        await waitFor(async () => (await healthy()) === 200, EMBEDDED_START_MS, 250);
        expect(output().match(/running in production on the embedded database/g)).toHaveLength(1);
      } finally {
        child.kill("SIGKILL");
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240_000);

  // An area's own variables are read by the area (its settings.ts), not by config.ts: a bad one is refused the same way,
  // when the app is created and before anything opens. Each is checked in-process; one goes through a real start.
  const AREA_BAD: [Record<string, string>, string][] = [
    [{ NETWORK_API_URL: "" }, "NETWORK_API_URL is required when SIMULATORS is off"],
    [{ GATEWAY_API_URL: "ftp://gateway.example" }, 'GATEWAY_API_URL must use http: or https:, got "ftp:"'],
    [{ QR_MONITOR_INTERVAL_MS: "50" }, "QR_MONITOR_INTERVAL_MS must be between 200 and 60000, got 50"],
    [{ LINK_MAX_MONITORS: "0" }, "LINK_MAX_MONITORS must be between 1 and 1000, got 0"],
    [
      {
        LINK_USER_AGENT:
          "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0",
      },
      'LINK_USER_AGENT must not say "Headless": that is what it is there to hide',
    ],
    [
      { PAYWAY_API_ORIGIN: "https://pwapp.example.com/api" },
      'PAYWAY_API_ORIGIN: "https://pwapp.example.com/api" is not an origin (scheme://host[:port], no path): ' +
        "use https://pwapp.example.com",
    ],
  ];
  it.each(AREA_BAD)("an area's bad variable %j is refused before anything opens", async (bad, message) => {
    const parent = mkdtempSync(join(tmpdir(), "pqr-startup-"));
    // Where the embedded database and the generated secrets would go: it must not come into being.
    const dataDir = join(parent, "data");
    try {
      const env = { ...PROD, EMBEDDED_IN_PRODUCTION: "1", DATA_DIR: dataDir, PORT: "4000", ...bad };
      const config = loadConfig(env, null);
      let refusal: string | null = null;
      await createApp(config, { modules: MODULES, env }).then(
        (app) => app.stop(),
        (err: unknown) => {
          if (!(err instanceof ConfigError)) throw err;
          refusal = err.message;
        },
      );
      expect(refusal).toBe(message);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it("an area's bad variable stops a real start with one line and exit code 2, nothing created", async () => {
    const parent = mkdtempSync(join(tmpdir(), "pqr-startup-"));
    const dataDir = join(parent, "data");
    try {
      const [bad, message] = AREA_BAD[2] as [Record<string, string>, string];
      const env = { ...PROD, EMBEDDED_IN_PRODUCTION: "1", DATA_DIR: dataDir, PORT: String(await freePort()) };
      const r = await run({ ...env, ...bad });
      expect(r.code).toBe(2);
      expect(r.stderr.split("\n").filter((l) => l.trim() !== "")).toEqual([`Configuration error: ${message}`]);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  }, 60_000);

  it("the strength estimator's dictionaries are loaded in production only", async () => {
    // A fresh process each: whether loading the configuration required @zxcvbn-ts, and how long it took.
    const probe = async (env: Record<string, string>) => {
      const script =
        "const { createRequire } = await import('node:module');" +
        "const t = performance.now(); const { loadConfig } = await import('./dist/src/config.js');" +
        `loadConfig(${JSON.stringify(env)}); const ms = performance.now() - t;` +
        "const cache = createRequire(import.meta.url).cache;" +
        "console.log(JSON.stringify({ loaded: Object.keys(cache).some((k) => k.includes('@zxcvbn-ts')), ms }));";
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      await new Promise((resolve) => child.once("exit", resolve));
      return JSON.parse(out) as { loaded: boolean; ms: number };
    };
    expect((await probe({ ADMIN_TOKEN })).loaded).toBe(false);
    expect((await probe({})).loaded).toBe(false);
    expect((await probe({ ...PROD, DATABASE_URL: "postgresql://pqr@127.0.0.1:9/pqr" })).loaded).toBe(true);
  });

  it("the port is already in use", async () => {
    const db = await createTestDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), "pqr-startup-"));
    const port = await freePort();
    const blocker: Server = createServer().listen(port, "127.0.0.1");
    try {
      const r = await run({ ...PROD, DATABASE_URL: db.url, PORT: String(port), DATA_DIR: dataDir });
      expect(r.code).not.toBe(0);
      expectOneClearLine(r.stderr, new RegExp(`127\\.0\\.0\\.1:${port}`), /already in use/, /PORT/);
    } finally {
      blocker.close();
      await db.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it("DATABASE_URL points at nothing", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pqr-startup-"));
    const port = await freePort();
    try {
      const r = await run({
        ...PROD,
        DATABASE_URL: `postgresql://pqr:secret-password@127.0.0.1:${await freePort()}/pqr`,
        PORT: String(port),
        DATA_DIR: dataDir,
      });
      expect(r.code).not.toBe(0);
      expectOneClearLine(r.stderr, /DATABASE_URL/, /cannot connect|could not connect/i);
      expect(r.stderr).not.toContain("secret-password");
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);

  it("DATA_DIR cannot be written (a file stands where the directory should be)", async () => {
    const parent = mkdtempSync(join(tmpdir(), "pqr-startup-"));
    const notADir = join(parent, "data");
    writeFileSync(notADir, "not a directory");
    try {
      // The embedded default: nothing configured but the data directory.
      const r = await run({ PORT: String(await freePort()), HOST: "127.0.0.1", LOG_LEVEL: "warn", DATA_DIR: notADir });
      expect(r.code).not.toBe(0);
      expectOneClearLine(r.stderr, /DATA_DIR/, new RegExp(notADir.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")));
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  }, 90_000);

  it("without Chromium the service starts and the gateway-link area answers 503 naming CHROMIUM_PATH; its compiled code is kept for the next start", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "pqr-startup-"));
    // The demo's data as a second `npm start` finds it: a first start on an empty DATA_DIR is newcomer.test.ts's.
    await copyDemoTemplate(dataDir);
    const port = await freePort();
    const child = spawn(process.execPath, ["dist/src/main.js", "serve"], {
      env: {
        ...process.env,
        NODE_OPTIONS: "",
        PORT: String(port),
        HOST: "127.0.0.1",
        LOG_LEVEL: "warn",
        DATA_DIR: dataDir,
        CHROMIUM_PATH: join(dataDir, "no-chromium-here"),
        // Where Node keeps its compile cache when nothing says otherwise: the system's temporary directory.
        TMPDIR: dataDir,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output = keepOutput(child);
    try {
      const base = `http://127.0.0.1:${port}`;
      const ready = () => statusOf(`${base}/readyz`).catch(() => 0);
      await waitFor(async () => (await ready()) === 200, EMBEDDED_START_MS, 250);
      const demo = JSON.parse((await import("node:fs")).readFileSync(join(dataDir, "demo.json"), "utf8")) as {
        keys: { qr: string; gatewayLink: string };
      };
      const link = await post(
        `${base}/gateway-link/generate-qr`,
        { amount: 1000, currency: 116 },
        AUTH.gatewayLink(demo.keys.gatewayLink),
      );
      expect(link.status).toBe(503);
      expect(link.body).toEqual({
        error: expect.objectContaining({
          code: "SERVICE_UNAVAILABLE",
          message: expect.stringContaining("CHROMIUM_PATH"),
        }),
      });
      // The other areas work.
      const qr = await post(
        `${base}/qr/generate`,
        { amount: 1, currency: 840, expiredAfter: 60_000 },
        AUTH.qr(demo.keys.qr),
      );
      expect(qr.status).toBe(200);
      // The log said so at start-up, before anyone asked.
      expect(output()).toMatch(/no executable at .*no-chromium-here.*CHROMIUM_PATH/);
      // With nothing configured, Node's compile cache holds the code of the modules the service loaded (hundreds
      // of files) once it is ready: written then, not at exit, so a start after this one's kill -9 below finds it.
      expect(readdirSync(join(dataDir, "node-compile-cache"), { recursive: true }).length).toBeGreaterThan(300);
    } finally {
      child.kill("SIGKILL");
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240_000);
});

describe("Node's compile cache is an aid, never a condition", () => {
  it("a cache directory that cannot be made changes nothing: the command runs and says nothing of it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pqr-compile-cache-"));
    try {
      writeFileSync(join(dir, "a-file"), "");
      const r = await run({ NODE_COMPILE_CACHE: join(dir, "a-file", "cache") }, 60_000, [
        "schema",
        join(dir, "schema.graphql"),
      ]);
      expect(r).toEqual({ code: 0, stderr: "", stdout: "" });
      expect(readFileSync(join(dir, "schema.graphql"), "utf8")).toBe(readFileSync("schema.graphql", "utf8"));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
