import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { startDemoService, type DemoService } from "./support/demo-service.js";
import { docsPage, docsPages, README, readmeBlocks, runShell } from "./support/readme.js";
import { EVENT_TYPES } from "../src/transactions/transaction-event.entity.js";

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
const anchorsOf = (file: string) =>
  new Set(
    readFileSync(file, "utf8")
      .replace(/^```[\s\S]*?^```/gm, "")
      .split("\n")
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) => slug(l.replace(/^#+ /, ""))),
  );

/**
 * The README is an entry (quick start, concepts, links); the reference is one page per topic in docs/. A reader
 * must still find from the README each thing they come for, and the README's test command is the one CI runs.
 */
describe("the README is an entry into its reference pages", () => {
  const readme = readFileSync(README, "utf8");

  it("is at most 25 KiB", () => {
    expect(statSync(README).size).toBeLessThanOrEqual(25_600);
  });

  it("has the quick start's two commands, and its test command is the one .ci/run runs", () => {
    const block = /## Quick start\n[\s\S]*?```sh\n([\s\S]*?)\n```/.exec(readme)?.[1] ?? "";
    const commands = block.split("\n").map((l) => l.replace(/#.*$/, "").trim());
    expect(commands).toEqual(["npm ci && npm start", "npm test"]);
    const ci = readFileSync(".ci/run", "utf8").split("\n");
    expect(ci.filter((l) => l.trim() === commands[1])).toHaveLength(1);
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> };
    expect(Object.keys(pkg.scripts)).toEqual(expect.arrayContaining(["start", "test"]));
  });

  it("links each page a reader comes for, at a heading that exists", () => {
    const links = [...readme.matchAll(/\]\((docs\/[\w-]+\.md)(?:#([^)]*))?\)/g)].map((m) => `${m[1]}#${m[2] ?? ""}`);
    const wanted = [
      "docs/configuration.md#",
      "docs/upstreams.md#",
      "docs/gateway-link.md#pointing-at-a-real-payway-link",
      "docs/webhooks.md#verifying-a-delivery",
      "docs/operations.md#roles-and-scaling-out",
      "docs/deploying.md#",
      "docs/bench.md#",
      "docs/qr.md#",
      "docs/gateway.md#",
      "docs/simulator-controls.md#",
    ];
    expect(wanted.filter((w) => !links.includes(w))).toEqual([]);
    expect(anchorsOf(README).has("quick-start")).toBe(true);
  });

  it("every #heading link of the README and the reference pages names a heading of its target", () => {
    const broken: string[] = [];
    for (const file of [README, ...docsPages()])
      for (const m of readFileSync(file, "utf8").matchAll(/\]\(([^)#\s]*)#([^)\s]+)\)/g)) {
        const target = m[1] === "" ? file : join(dirname(file), m[1] as string);
        if (/^[a-z]+:/.test(m[1] as string) || !target.endsWith(".md") || !existsSync(target)) continue;
        if (!anchorsOf(target).has(m[2] as string)) broken.push(`${relative(process.cwd(), file)}: ${m[0]}`);
      }
    expect(broken).toEqual([]);
  });

  it("links every reference page of docs/ from its Documentation table", () => {
    const table = readme.slice(readme.indexOf("\n## Documentation\n"));
    const pages = docsPages().map((p) => relative(process.cwd(), p));
    expect(pages.filter((p) => !table.includes(`](${p})`))).toEqual([]);
  });

  it("links each area's page to the area's docs stanza in its folder", () => {
    for (const area of ["qr", "gateway", "gateway-link"])
      expect(docsPage(area)).toContain(`](../src/${area}/README.md)`);
  });
});

describe("the webhook event table (docs/webhooks.md)", () => {
  it("has one row per event kind the service sends, each saying what it means in every area", () => {
    const page = docsPage("webhooks");
    const table = page.slice(page.indexOf("| event | generic QR | hosted gateway | gateway link |"));
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

/** Each line a snippet prints is one whole answer: a JSON document, or one word (`CHECKOUT`). */
const oneAnswerPerLine = (stdout: string) =>
  stdout
    .split("\n")
    .filter((l) => l !== "")
    .filter((l) => {
      if (/^[A-Za-z.]+( [A-Z]+)?$/.test(l)) return false;
      try {
        JSON.parse(l);
        return false;
      } catch {
        return true;
      }
    });

/**
 * The code of the README and its reference pages, run as written against a started demo (`node dist/src/main.js serve`, nothing configured but
 * PORT and DATA_DIR, which the snippets must follow): a newcomer copies these blocks into a terminal.
 */
describe("the README's and docs' snippets work as written", () => {
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
    if (b === undefined) throw new Error(`no block of README.md or docs/*.md is marked readme-test: ${name}`);
    return b.code;
  };

  it("quick start: generate, pay on the simulated network, check says SUCCESS, the inbox holds signed webhooks", async () => {
    const r = await runShell(block("quick-start"), env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`"checkoutUrl":"${svc.url}/pay/txn_`);
    expect(r.stdout).toMatch(/"status":"SUCCESS"/);
    expect(r.stdout).toMatch(/payment\.completed/);
    expect(oneAnswerPerLine(r.stdout)).toEqual([]);
  }, 60_000);

  it("quick start's helpers, run outside the project's folder, say where to run them (no stack trace)", async () => {
    const away = realpathSync(mkdtempSync(join(tmpdir(), "pqr-readme-away-")));
    try {
      const r = await runShell(`cd ${JSON.stringify(away)}\n${block("quick-start")}`, {});
      expect(r.code).not.toBe(0);
      expect(r.stderr.trim()).toBe(
        "no data/demo.json here: run this in the project's folder, with npm start's DATA_DIR",
      );
      expect(r.stdout).toBe("");
    } finally {
      rmSync(away, { recursive: true, force: true });
    }
  });

  it("quick start, the other areas: a gateway QR paid by the payer, a payment-link QR scanned and approved, each checked SUCCESS", async () => {
    const r = await runShell(`${block("quick-start")}\n${block("quick-start-areas")}`, env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/CHECKOUT$/m);
    expect(r.stdout).toMatch(/"paymentStatus":"APPROVED"/);
    expect(r.stdout).toMatch(/"action":"scanned"/);
    expect(r.stdout).toMatch(/"action":"processing-payment"/);
    expect(r.stdout).toMatch(/^\{[^\n]*"orderId":"order-\d+"[^\n]*"status":"SUCCESS"/m);
    expect(r.stdout).toMatch(/"status":"SUCCESS"[^\n]*"receiptUrl":"http/);
    expect(oneAnswerPerLine(r.stdout)).toEqual([]);
  }, 90_000);

  it("GraphQL with curl: a mutation, a query and a list with the demo key", async () => {
    const r = await runShell(`${block("quick-start")}\n${block("graphql-curl")}`, env);
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(r.stdout).toMatch(/\{"data":\{"generateQr":\{"transactionId":"txn_\w+","status":"PENDING"/);
    expect(r.stdout).toMatch(/\{"data":\{"qrTransaction":\{"transactionId":"txn_\w+","status":"PENDING"/);
    expect(r.stdout).toMatch(/\{"data":\{"transactions":\{"edges":\[\{"node":/);
    expect(r.stdout).not.toMatch(/"errors"/);
    expect(oneAnswerPerLine(r.stdout)).toEqual([]);
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
