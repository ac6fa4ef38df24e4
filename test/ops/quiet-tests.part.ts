import { describe, it, expect, afterAll, beforeAll } from "@jest/globals";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { seedDemo } from "../../src/demo/seed.js";
import { startTestApp, type TestApp } from "../support/app.js";

/** `npm test`'s output is its results: no demo banner with keys, no warnings from Node among them. */
describe("the test run prints only results", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t?.stop());

  it("seeding a demo prints its banner only where asked to (commands.ts), never into a test's output", async () => {
    const written: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      written.push(String(chunk));
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof process.stdout.write;
    let demo;
    try {
      demo = await seedDemo(t.app);
    } finally {
      process.stdout.write = write;
    }
    expect(written.filter((w) => w.includes(demo.adminToken) || w.includes("demo mode"))).toEqual([]);
    let banner = "";
    await seedDemo(t.app, (b) => (banner = b));
    expect(banner).toContain(`qr key (api-key)          ${demo.keys.qr}`);
  });

  it("the test scripts keep Node's experimental-feature warning for jest's ES modules out of the output", () => {
    const scripts = (JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> }).scripts;
    for (const name of ["test", "test:faults"]) {
      const options = /NODE_OPTIONS="([^"]+)"/.exec(scripts[name])?.[1];
      expect({ name, options }).toEqual({ name, options: expect.stringContaining("--experimental-vm-modules") });
      // What jest does with that flag: build a vm module. Node warns about it unless told not to.
      const r = spawnSync(process.execPath, ["-e", "new (require('node:vm').SourceTextModule)('export {}')"], {
        env: { PATH: process.env.PATH ?? "", NODE_OPTIONS: options as string },
        encoding: "utf8",
      });
      expect({ name, status: r.status, stderr: r.stderr }).toEqual({ name, status: 0, stderr: "" });
    }
  });
});
