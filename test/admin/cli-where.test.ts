import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The admin CLI, run where the README says not to (outside the project's folder, with no service answering), says
 * what to do in one line instead of a stack trace: the reader learns where to run it.
 */
const MAIN = join(process.cwd(), "dist/src/main.js");

function admin(cwd: string, args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [MAIN, "admin", ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  return new Promise<{ code: number | null; out: string }>((resolve) =>
    child.once("exit", (code) => resolve({ code, out })),
  );
}

/** A port nothing listens on: one the system just gave and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const STACK = /^\s+at .+[:(]/m;

describe("the admin CLI outside the project's folder", () => {
  let away: string;
  beforeAll(() => {
    away = realpathSync(mkdtempSync(join(tmpdir(), "pqr-cli-away-")));
  });
  afterAll(() => rmSync(away, { recursive: true, force: true }));

  it("a command without a token names the demo.json it looked for and says to run it in the project's folder", async () => {
    const r = await admin(away, ["merchants"]);
    expect(r.code).toBe(2);
    expect(r.out.trim().split("\n")).toHaveLength(1);
    expect(r.out).toContain(`there is no ${join(away, "data", "demo.json")}: run this in the project's folder`);
    expect(r.out).not.toMatch(STACK);
  });

  it("listen without a key or token says the same in one line", async () => {
    const r = await admin(away, ["listen", "--forward-to", "http://127.0.0.1:3000/hooks"]);
    expect(r.code).toBe(2);
    expect(r.out).toMatch(/^pass --api-key .*run it in the project's folder/);
    expect(r.out).not.toMatch(STACK);
  });

  it("a service that does not answer is named with its address and how to point the CLI elsewhere", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const r = await admin(away, ["merchants"], { ADMIN_TOKEN: "t".repeat(40), PQR_URL: url });
    expect(r.code).toBe(1);
    expect(r.out.trim()).toBe(
      `cannot reach the service at ${url} (ECONNREFUSED): is it running (npm start)? set PQR_URL to its address`,
    );
  });
});
