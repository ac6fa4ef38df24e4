import { describe, it, expect } from "@jest/globals";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  BrowserPool,
  chooseSandbox,
  sandboxForThisMachine,
  type SandboxChoice,
} from "../../src/gateway-link/browser.js";
import { detectSandboxSituation } from "../../src/gateway-link/chromium.js";
import { ConfigError, EnvReader, loadConfig } from "../../src/config.js";
import { linkSettings } from "../../src/gateway-link/settings.js";
import { CHROMIUM_PATH } from "../support/link-sim.js";
import { startPaywayTwin } from "../support/payway-twin.js";

describe("Chromium's sandbox (issue 16, finding 4)", () => {
  it("is used wherever the machine allows it: non-root with user namespaces; --no-sandbox only as root or without them", () => {
    const pick = (root: boolean, userNamespaces: boolean): SandboxChoice => chooseSandbox({ root, userNamespaces });
    expect(pick(false, true)).toMatchObject({ sandboxed: true, args: [] });
    expect(pick(true, true)).toMatchObject({ sandboxed: false, args: ["--no-sandbox"] });
    expect(pick(true, true).reason).toMatch(/WITHOUT its sandbox: this process runs as root/);
    expect(pick(false, false)).toMatchObject({ sandboxed: false, args: ["--no-sandbox"] });
    expect(pick(false, false).reason).toMatch(/user namespaces are not available/);
    // CHROMIUM_SANDBOX overrides the detection either way.
    expect(chooseSandbox({ root: true, userNamespaces: false }, "on")).toMatchObject({ sandboxed: true, args: [] });
    expect(chooseSandbox({ root: false, userNamespaces: true }, "off")).toMatchObject({ args: ["--no-sandbox"] });
  });

  it("detects this machine and really launches Chromium with the flags chosen for it", async () => {
    const situation = detectSandboxSituation();
    expect(situation.root).toBe(process.getuid?.() === 0);
    const choice = sandboxForThisMachine();
    expect(choice).toEqual(chooseSandbox(situation));
    const sim = await startPaywayTwin();
    const pool = new BrowserPool({ executablePath: CHROMIUM_PATH, maxPages: 1 });
    try {
      const lease = await pool.acquire({ url: await sim.link() });
      const cmdline = readFileSync(`/proc/${pool.stats().pid}/cmdline`, "utf8").split("\0");
      expect(cmdline.includes("--no-sandbox")).toBe(!choice.sandboxed);
      expect(await lease.start()).toBe(200);
      await lease.release();
    } finally {
      await pool.close();
      await sim.close();
    }
  });
});

// The sandboxed launch itself, as the non-root user a container should use. Needs root to switch users.
const canSwitchUser = process.getuid?.() === 0 && spawnSync("setpriv", ["--version"]).status === 0;
(canSwitchUser ? it : it.skip)("as a non-root user with user namespaces, Chromium starts with its sandbox", () => {
  const dir = mkdtempSync(join(tmpdir(), "pqr-sandbox-"));
  chmodSync(dir, 0o777);
  const puppeteerPath = resolve("node_modules/puppeteer-core/lib/esm/puppeteer/puppeteer-core.js");
  // The detection as the child sees it: the built module (npm test builds first).
  const chromiumModule = resolve("dist/src/gateway-link/chromium.js");
  const script = join(dir, "launch.mjs");
  writeFileSync(
    script,
    `import puppeteer from ${JSON.stringify(puppeteerPath)};
     import { detectSandboxSituation, chooseSandbox } from ${JSON.stringify(chromiumModule)};
     const choice = chooseSandbox(detectSandboxSituation());
     const b = await puppeteer.launch({ executablePath: ${JSON.stringify(CHROMIUM_PATH)}, headless: true, pipe: true,
       userDataDir: ${JSON.stringify(join(dir, "profile"))}, args: [...choice.args, "--disable-gpu"], env: { PATH: process.env.PATH, HOME: ${JSON.stringify(dir)} } });
     const p = await b.newPage();
     await p.goto("data:text/html,<p id=x>sandboxed</p>");
     console.log(JSON.stringify({ args: choice.args, text: await p.$eval("#x", (e) => e.textContent) }));
     await b.close();`,
  );
  // Readable by the other user whatever umask this worker has (the embedded database sets 077 process-wide).
  chmodSync(script, 0o644);
  const run = spawnSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, script], {
    encoding: "utf8",
    timeout: 60_000,
  });
  rmSync(dir, { recursive: true, force: true });
  if (run.status !== 0) throw new Error(`the non-root launch failed: ${run.stderr}`);
  const out = JSON.parse(run.stdout.trim()) as { args: string[]; text: string };
  expect(out.text).toBe("sandboxed");
  // This machine allows unprivileged user namespaces: no --no-sandbox was passed.
  expect(out.args).toEqual([]);
});

describe("LINK_ALLOWED_ORIGINS and CHROMIUM_SANDBOX settings", () => {
  const base = { NODE_ENV: "test", ADMIN_TOKEN: "test-admin-token-0123456789-0123456789", SECRET_KEY: "k".repeat(32) };
  // The area's own settings (gateway-link/settings.ts), read as createApp reads them.
  const settings = (env: Record<string, string>) => linkSettings(new EnvReader(env), loadConfig(env));
  it("reads a comma-separated list of origins and refuses anything that is not an origin", () => {
    const link = settings({ ...base, LINK_ALLOWED_ORIGINS: " https://cdn.example.com ,http://127.0.0.1:8080/" });
    expect(link.allowedOrigins).toEqual(["https://cdn.example.com", "http://127.0.0.1:8080"]);
    expect(settings(base).allowedOrigins).toEqual([]);
    expect(settings(base).sandbox).toBe("auto");
    for (const bad of ["https://cdn.example.com/js", "javascript:alert(1)", "cdn.example.com", "https://u:p@x.example"])
      expect(() => settings({ ...base, LINK_ALLOWED_ORIGINS: bad })).toThrow(ConfigError);
    expect(() => settings({ ...base, CHROMIUM_SANDBOX: "maybe" })).toThrow(ConfigError);
  });
});
