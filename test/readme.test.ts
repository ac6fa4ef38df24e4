import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startDemoService, type DemoService } from "./support/demo-service.js";
import { readmeBlocks, runShell } from "./support/readme.js";
import { EVENT_TYPES } from "../src/transactions/transaction-event.entity.js";

describe("the README's webhook event table", () => {
  it("has one row per event kind the service sends, each saying what it means in every area", () => {
    const readme = readFileSync("README.md", "utf8");
    const table = readme.slice(readme.indexOf("| event | generic QR | hosted gateway | gateway link |"));
    const rows = table
      .split("\n")
      .slice(2)
      .filter((l, i, all) => all.slice(0, i + 1).every((r) => r.startsWith("|")));
    expect(rows.map((r) => /^\| `([a-z.]+)` \|/.exec(r)?.[1]).sort()).toEqual([...EVENT_TYPES].sort());
    for (const row of rows)
      expect(
        row
          .split("|")
          .slice(2, 5)
          .every((cell) => cell.trim() !== ""),
      ).toBe(true);
  });
});

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
    expect(r.stdout).toMatch(/"action":"processing-payment"/);
    expect(r.stdout).toMatch(/"status":"SUCCESS"[^\n]*"receiptUrl":"http/);
  }, 90_000);

  it("GraphQL with curl: a mutation, a query and a list with the demo key", async () => {
    const r = await runShell(`${block("quick-start")}\n${block("graphql-curl")}`, env);
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(r.stdout).toMatch(/\{"data":\{"generateQr":\{"transactionId":"txn_\w+","status":"PENDING"/);
    expect(r.stdout).toMatch(/\{"data":\{"qrTransaction":\{"transactionId":"txn_\w+","status":"PENDING"/);
    expect(r.stdout).toMatch(/\{"data":\{"transactions":\{"edges":\[\{"node":/);
    expect(r.stdout).not.toMatch(/"errors"/);
  }, 60_000);

  it("GraphQL over graphql-ws: the README's client follows the payment to SUCCESS with the clientToken", async () => {
    // watch.mjs where the README's reader has it: beside their own node_modules (here, the project's).
    const dir = mkdtempSync(join(process.cwd(), ".scratch-readme-"));
    try {
      const client = blocks.get("graphql-ws-client");
      expect(client?.lang).toBe("js");
      writeFileSync(join(dir, "watch.mjs"), client!.code);
      const script = [
        block("quick-start"),
        block("graphql-curl"),
        `cd ${JSON.stringify(dir)}`,
        block("graphql-ws-run"),
      ];
      const r = await runShell(script.join("\n"), env, 90_000);
      expect(r).toMatchObject({ code: 0, stderr: "" });
      expect(r.stdout).toMatch(/^payment\.completed SUCCESS$/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
