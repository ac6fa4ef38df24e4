import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startDemoService, type DemoService } from "./support/demo-service.js";
import { readmeBlocks, runShell } from "./support/readme.js";

/**
 * The README's code, run as written against a started demo (`node dist/src/main.js serve`, nothing configured but
 * PORT and DATA_DIR, which the snippets must follow): a newcomer copies these blocks into a terminal.
 */
describe("the README's snippets work as written", () => {
  const blocks = readmeBlocks();
  let svc: DemoService;
  let env: Record<string, string>;
  beforeAll(async () => {
    svc = await startDemoService("readme");
    env = { PORT: new URL(svc.url).port, DATA_DIR: svc.service.dataDir };
  }, 120_000);
  afterAll(async () => svc?.dispose());

  const block = (name: string) => {
    const b = blocks.get(name);
    if (b === undefined) throw new Error(`README.md has no block marked readme-test: ${name}`);
    return b.code;
  };

  it("quick start: generate, pay on the simulated network, check says SUCCESS, the inbox holds signed webhooks", async () => {
    const r = await runShell(block("quick-start"), env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`"checkoutUrl":"${svc.url}/pay/txn_`);
    expect(r.stdout).toMatch(/"status":"SUCCESS"/);
    expect(r.stdout).toMatch(/payment\.completed/);
  }, 60_000);

  it("quick start, the other areas: a gateway QR paid by the payer, a payment-link QR scanned and approved", async () => {
    const r = await runShell(`${block("quick-start")}\n${block("quick-start-areas")}`, env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/CHECKOUT$/m);
    expect(r.stdout).toMatch(/"paymentStatus":"APPROVED"/);
    expect(r.stdout).toMatch(/"action":"scanned"/);
    expect(r.stdout).toMatch(/"action":"approved"/);
  }, 90_000);
});
