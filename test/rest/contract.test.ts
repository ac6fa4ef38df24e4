import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { execFile } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { ROUTES } from "../../src/app.js";
import { AUTH } from "../support/app.js";
import { mediaTypeOf } from "../support/openapi-contract.js";
import { startDemoService, type DemoService } from "../support/demo-service.js";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- walking a JSON document

const run = promisify(execFile);
const ROOT = process.cwd();
// Under the repository (the client resolves openapi-fetch and @types/node from its node_modules), outside the
// typechecked and linted folders; ignored by git (.scratch-*/).
const WORK = join(ROOT, ".scratch-contract");

/**
 * The REST contract checked by third-party tools against the live document of the demo (/openapi.json, its
 * examples live values): Redocly's recommended lint, a JSON Schema 2020-12 validator on every documented example
 * and error case of the eight paths, and a client generated from the document (openapi-typescript + openapi-fetch),
 * typechecked and run.
 */
describe("the REST contract, by third-party tools", () => {
  let svc: DemoService;
  let doc: Obj;
  let keys: Record<string, Record<string, string>>;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  const compiled = new Map<object, ValidateFunction>();
  const validate = (schema: object, value: unknown) => {
    let v = compiled.get(schema);
    if (v === undefined) compiled.set(schema, (v = ajv.compile(schema)));
    return v(value) ? null : JSON.stringify(v.errors?.slice(0, 3));
  };
  const op = (path: string): Obj => doc.paths[path].post;
  const requestSchema = (path: string): Obj => op(path).requestBody.content["application/json"].schema;
  const example = (path: string): Obj => structuredClone(op(path).requestBody.content["application/json"].example);
  const keyOf = (path: string) => keys[ROUTES.find((r) => r.path === path)!.kind];
  /** The example, with a new order id where the path takes one (unique per merchant). */
  let orders = 0;
  const freshExample = (path: string): Obj => {
    const ex = example(path);
    return ex.qrData === undefined ? ex : order(ex, { orderId: `ct-${Date.now().toString(36)}-${++orders}` });
  };

  beforeAll(async () => {
    svc = await startDemoService("contract");
    doc = (await (await fetch(`${svc.url}/openapi.json`)).json()) as Obj;
    keys = {
      qr: AUTH.qr(svc.demo.keys.qr),
      gateway: AUTH.gateway(svc.demo.keys.gateway),
      gateway_link: AUTH.gatewayLink(svc.demo.keys.gatewayLink),
    };
    rmSync(WORK, { recursive: true, force: true });
    mkdirSync(WORK, { recursive: true });
  }, 120_000);
  afterAll(async () => {
    await svc?.dispose();
  });

  it("redocly lint (recommended ruleset, redocly.yaml) finds no error in the live document", async () => {
    const file = join(WORK, "openapi.json");
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const cli = join(ROOT, "node_modules", "@redocly", "cli", "bin", "cli.js");
    const { stdout } = await run(
      process.execPath,
      [cli, "lint", file, "--config", join(ROOT, "redocly.yaml"), "--format", "json"],
      { env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" }, cwd: WORK },
    ).catch((err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? "", stderr: err.stderr }));
    const report = JSON.parse(stdout.slice(stdout.indexOf("{"))) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; severity: string; message: string }[];
    };
    const errors = report.problems.filter((p) => p.severity === "error");
    expect(errors.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals.errors).toBe(0);
    // The examples are live values that run as shown: none is refused by its own schema.
    expect(report.problems.filter((p) => p.ruleId === "no-invalid-media-type-examples")).toEqual([]);
  }, 60_000);

  /** Sends one case; checks the answer's status, media type and body against the document. */
  async function send(
    path: string,
    body: unknown,
    headers: Record<string, string>,
  ): Promise<{ status: number; body: Obj; problem: string | null }> {
    const res = await fetch(`${svc.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    const parsed = JSON.parse(text) as Obj;
    const response = op(path).responses[String(res.status)];
    if (response === undefined) return { status: res.status, body: parsed, problem: "status not documented" };
    const media = mediaTypeOf(res.headers.get("content-type"));
    const content = response.content?.[media ?? ""];
    if (content === undefined)
      return { status: res.status, body: parsed, problem: `media type ${media} not documented` };
    return { status: res.status, body: parsed, problem: validate(content.schema, parsed) };
  }

  /**
   * Bodies the service refuses with 400 for a rule the contract states: each must be refused by the request schema
   * too (the contract says what the code checks), and the 400 answer must match the document.
   */
  const REFUSED: { path: string; what: string; body: (ex: Obj) => unknown }[] = [
    { path: "/qr/generate", what: "currency as letters", body: (ex) => ({ ...ex, currency: "USD" }) },
    { path: "/qr/generate", what: "an unknown currency", body: (ex) => ({ ...ex, currency: 978 }) },
    { path: "/qr/generate", what: "expiry below 10 s", body: (ex) => ({ ...ex, expiredAfter: 5000 }) },
    { path: "/qr/generate", what: "expiry above 24 h", body: (ex) => ({ ...ex, expiredAfter: 86_400_001 }) },
    { path: "/qr/generate", what: "a zero amount", body: (ex) => ({ ...ex, amount: 0 }) },
    { path: "/qr/generate", what: "a KHR amount with decimals", body: (ex) => ({ ...ex, currency: 116, amount: 1.5 }) },
    { path: "/qr/generate", what: "an amount of 14 digits", body: (ex) => ({ ...ex, amount: 1e13 }) },
    { path: "/qr/generate", what: "meta with 51 keys", body: (ex) => ({ ...ex, meta: manyKeys(51) }) },
    { path: "/qr/generate", what: "an ftp returnUrl", body: (ex) => ({ ...ex, returnUrl: "ftp://example.com/x" }) },
    { path: "/qr/generate", what: "no amount", body: (ex) => ({ ...ex, amount: undefined }) },
    { path: "/qr/check", what: "an md5 of 31 characters", body: () => ({ md5: "a".repeat(31) }) },
    { path: "/qr/check", what: "an md5 not hex", body: () => ({ md5: "g".repeat(32) }) },
    { path: "/qr/verify", what: "no qrData", body: () => ({}) },
    { path: "/qr/decode", what: "qrData not a string", body: () => ({ qrData: 7 }) },
    {
      path: "/gateway/generate-qr",
      what: "an orderId of 21 characters",
      body: (ex) => order(ex, { orderId: "A".repeat(21) }),
    },
    { path: "/gateway/generate-qr", what: "an orderId with a space", body: (ex) => order(ex, { orderId: "A 1" }) },
    { path: "/gateway/generate-qr", what: "currency EUR", body: (ex) => order(ex, { currency: "EUR" }) },
    { path: "/gateway/generate-qr", what: "currency as a number", body: (ex) => order(ex, { currency: 840 }) },
    {
      path: "/gateway/generate-qr",
      what: "a KHR amount under 100",
      body: (ex) => order(ex, { currency: "KHR", amount: 50 }),
    },
    { path: "/gateway/generate-qr", what: "a USD amount under 0.01", body: (ex) => order(ex, { amount: 0.001 }) },
    { path: "/gateway/generate-qr", what: "a lifetime of 2 minutes", body: (ex) => order(ex, { lifetime: 2 }) },
    { path: "/gateway/generate-qr", what: "a lifetime over 30 days", body: (ex) => order(ex, { lifetime: 43_201 }) },
    { path: "/gateway/generate-qr", what: "a first name with digits", body: (ex) => order(ex, { firstName: "R2D2" }) },
    { path: "/gateway/generate-qr", what: "a phone of 7 digits", body: (ex) => order(ex, { phone: "1234567" }) },
    {
      path: "/gateway/generate-qr",
      what: "an unknown image template",
      body: (ex) => order(ex, { qrImageTemplate: "x" }),
    },
    { path: "/gateway/generate-qr", what: "11 items", body: (ex) => order(ex, { items: items(11) }) },
    {
      path: "/gateway/generate-qr",
      what: "an item of quantity 0",
      body: (ex) => order(ex, { items: [{ name: "a", quantity: 0, price: 1 }] }),
    },
    { path: "/gateway/check-status", what: "both identifiers", body: () => ({ transactionId: "t", orderId: "o" }) },
    { path: "/gateway/check-status", what: "neither identifier", body: () => ({}) },
    { path: "/gateway/check-status", what: "an empty orderId", body: () => ({ orderId: "" }) },
    {
      path: "/gateway/check-status",
      what: "an identifier of 101 characters",
      body: () => ({ transactionId: "t".repeat(101) }),
    },
    { path: "/gateway-link/generate-qr", what: "an unknown currency", body: (ex) => ({ ...ex, currency: 978 }) },
    { path: "/gateway-link/generate-qr", what: "a KHR amount with decimals", body: (ex) => ({ ...ex, amount: 10.5 }) },
    { path: "/gateway-link/generate-qr", what: "another lifetime", body: (ex) => ({ ...ex, expiredAfter: 60_000 }) },
    {
      path: "/gateway-link/generate-qr",
      what: "a remark of 256 characters",
      body: (ex) => ({ ...ex, remark: "r".repeat(256) }),
    },
    {
      path: "/gateway-link/generate-qr",
      what: "a payer e-mail without @",
      body: (ex) => ({ ...ex, payerEmail: "x.y" }),
    },
    { path: "/gateway-link/check", what: "an empty transactionId", body: () => ({ transactionId: "" }) },
  ];

  it("every documented example answers 200, as documented; every rule's refusal is in the schema and answers 400 as documented", async () => {
    const seen: Obj[] = [];
    for (const route of ROUTES) {
      const ex = example(route.path);
      expect({ path: route.path, example: validate(requestSchema(route.path), ex) }).toEqual({
        path: route.path,
        example: null,
      });
      const r = await send(route.path, ex, keyOf(route.path));
      seen.push({ path: route.path, case: "example", status: r.status, problem: r.problem });
    }
    for (const c of REFUSED) {
      const body = c.body(example(c.path));
      const r = await send(c.path, body, keyOf(c.path));
      const inSchema = validate(requestSchema(c.path), JSON.parse(JSON.stringify(body))) !== null;
      seen.push({ path: c.path, case: c.what, status: r.status, problem: r.problem, refusedBySchema: inSchema });
    }
    const expected = seen.map((s) =>
      s.case === "example"
        ? { ...s, status: 200, problem: null }
        : { ...s, status: 400, problem: null, refusedBySchema: true },
    );
    expect(seen).toEqual(expected);
    expect(seen).toHaveLength(8 + REFUSED.length);
    // A currency given as letters on the numeric paths is told the numbers (decision 0250), not "a whole number".
    for (const path of ["/qr/generate", "/gateway-link/generate-qr"]) {
      const r = await send(path, { ...example(path), currency: "USD" }, keyOf(path));
      expect(r.body.error.details).toEqual([{ field: "currency", message: expect.stringMatching(/840 \(USD\)/) }]);
      expect(r.body.error.details[0].message).toMatch(/116 \(KHR\)/);
      expect(r.body.error.message).not.toMatch(/whole number/);
    }
  }, 120_000);

  it("every path's documented error statuses answer as documented: 401, 404, 409, 400 duplicate order, 413, 431", async () => {
    const seen: Obj[] = [];
    const note = async (path: string, what: string, want: number, body: unknown, headers: Record<string, string>) => {
      const r = await send(path, body, headers);
      seen.push({ path, what, status: r.status, want, problem: r.problem, code: r.body.error?.code ?? null });
      return r;
    };
    for (const route of ROUTES) {
      const path = route.path;
      const ex = example(path);
      await note(path, "no key", 401, ex, {});
      await note(path, "another area's key", 401, ex, path.startsWith("/qr/") ? keys.gateway : keys.qr);
      await note(path, "body over 64 KiB", 413, { ...ex, pad: "x".repeat(70_000) }, keyOf(path));
      await note(path, "headers over 16 KiB", 431, ex, { ...keyOf(path), "x-pad": "x".repeat(20_000) });
      if (/generate/.test(path)) {
        const idem = { ...keyOf(path), "idempotency-key": `contract-${path}-${Date.now()}` };
        const body = freshExample(path);
        const first = await note(path, "idempotent first", 200, body, idem);
        expect(first.status).toBe(200);
        await note(
          path,
          "same Idempotency-Key, another body",
          409,
          { ...body, returnUrl: "https://example.com/" },
          idem,
        );
      }
    }
    await note("/qr/check", "unknown md5", 404, { md5: "0".repeat(32) }, keys.qr);
    await note("/gateway/check-status", "unknown transactionId", 404, { transactionId: "tx_unknown" }, keys.gateway);
    await note("/gateway-link/check", "unknown transactionId", 404, { transactionId: "tx_unknown" }, keys.gateway_link);
    const issued = await note(
      "/gateway/generate-qr",
      "an order",
      200,
      freshExample("/gateway/generate-qr"),
      keys.gateway,
    );
    const again = order(example("/gateway/generate-qr"), { orderId: issued.body.orderId });
    const dup = await note("/gateway/generate-qr", "the same orderId again", 400, again, keys.gateway);
    expect(dup.body.error.code).toBe("CONFLICT");
    expect(seen).toEqual(seen.map((s) => ({ ...s, status: s.want, problem: null })));
    expect(seen.length).toBeGreaterThanOrEqual(8 * 4 + 3 * 2 + 5);
  }, 120_000);

  it("a client generated from the document (openapi-typescript + openapi-fetch) typechecks and runs all eight paths", async () => {
    const dir = join(WORK, "client");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "openapi.json"), JSON.stringify(doc));
    const bin = (pkg: string, file: string) => join(ROOT, "node_modules", pkg, file);
    await run(process.execPath, [
      bin("openapi-typescript", "bin/cli.js"),
      join(dir, "openapi.json"),
      "-o",
      join(dir, "api.d.ts"),
    ]);
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
    writeFileSync(join(dir, "client.ts"), CLIENT);
    writeFileSync(join(dir, "wrong.ts"), WRONG);
    const tsconfig = (files: string[], emit: boolean) => ({
      compilerOptions: {
        strict: true,
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2022",
        types: ["node"],
        skipLibCheck: true,
        ...(emit ? { outDir: "out" } : { noEmit: true }),
      },
      files,
    });
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(tsconfig(["client.ts"], true)));
    writeFileSync(join(dir, "tsconfig.wrong.json"), JSON.stringify(tsconfig(["wrong.ts"], false)));
    const tsc = bin("typescript", "bin/tsc");
    const built = await run(process.execPath, [tsc, "-p", join(dir, "tsconfig.json")]).then(
      () => "",
      (e: { stdout?: string }) => e.stdout ?? "failed",
    );
    expect(built).toBe("");
    // The generated types carry the contract: a currency as letters on /qr/generate, an unknown status word and a
    // wrong x-auth-type do not compile.
    const wrong = await run(process.execPath, [tsc, "-p", join(dir, "tsconfig.wrong.json")]).then(
      () => "",
      (e: { stdout?: string }) => e.stdout ?? "",
    );
    expect(wrong.match(/wrong\.ts\(\d+,\d+\): error/g)).toHaveLength(3);
    const { stdout } = await run(process.execPath, [
      join(dir, "out", "client.js"),
      svc.url,
      svc.demo.keys.qr,
      svc.demo.keys.gateway,
      svc.demo.keys.gatewayLink,
    ]);
    const answers = JSON.parse(stdout) as Obj;
    expect(answers).toEqual({
      qrGenerate: { status: "PENDING", md5: expect.stringMatching(/^[0-9a-f]{32}$/) },
      qrCheck: { status: "PENDING", same: true },
      qrVerify: true,
      qrDecode: { code: 0, currency: "840" },
      gatewayGenerate: { status: "CHECKOUT", same: true },
      gatewayCheck: { status: "CHECKOUT", same: true },
      gatewayCheckUnknown: { http: 404, code: "NOT_FOUND" },
      linkGenerate: { status: "PENDING", currency: 116 },
      // The demo's payment link may already have moved on; whatever it says is one of the area's words.
      linkCheck: { status: expect.stringMatching(/^(PENDING|SUCCESS|EXPIRED|FAILED)$/), same: true },
    });
  }, 120_000);
});

function manyKeys(n: number): Record<string, number> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
}
function items(n: number): { name: string; quantity: number; price: number }[] {
  return Array.from({ length: n }, (_, i) => ({ name: `i${i}`, quantity: 1, price: 1 }));
}
function order(ex: Obj, qrData: Obj): Obj {
  return { ...ex, qrData: { ...ex.qrData, ...qrData } };
}

/** A small program against the generated types: every path once, typed bodies and answers (no cast). */
const CLIENT = `import createClient from "openapi-fetch";
import type { paths } from "./api.js";

const [baseUrl, qrKey, gatewayKey, linkKey] = process.argv.slice(2);
const api = createClient<paths>({ baseUrl });
const qr = { params: { header: { "x-auth-type": "api-key" as const } }, headers: { "x-api-key": qrKey } };
const gw = { params: { header: { "x-auth-type": "api-gateway" as const } }, headers: { "x-api-key": gatewayKey } };
const link = { params: { header: { "x-auth-type": "api-gateway-link" as const } }, headers: { "x-api-key": linkKey } };
function need<T>(v: T | undefined, what: string): T {
  if (v === undefined) throw new Error(what + " answered no data");
  return v;
}

const g = need((await api.POST("/qr/generate", { ...qr, body: { amount: 1.5, currency: 840, expiredAfter: 60000 } })).data, "qr generate");
const qrStatus: "PENDING" | "SUCCESS" | "EXPIRED" | "FAILED" = g.status;
const c = need((await api.POST("/qr/check", { ...qr, body: { md5: g.data.md5 } })).data, "qr check");
const v = (await api.POST("/qr/verify", { ...qr, body: { qrData: g.data.qr } })).data;
const d = need((await api.POST("/qr/decode", { ...qr, body: { qrData: g.data.qr } })).data, "qr decode");
const orderId = "cl-" + Date.now().toString(36);
const gg = need(
  (await api.POST("/gateway/generate-qr", { ...gw, body: { qrData: { orderId, amount: 2.5, currency: "USD" } } })).data,
  "gateway generate",
);
const gc = need((await api.POST("/gateway/check-status", { ...gw, body: { transactionId: gg.transactionId } })).data, "gateway check");
const unknown = await api.POST("/gateway/check-status", { ...gw, body: { orderId: "no-such-order" } });
const lg = need((await api.POST("/gateway-link/generate-qr", { ...link, body: { amount: 5000, currency: 116 } })).data, "link generate");
const lc = need((await api.POST("/gateway-link/check", { ...link, body: { transactionId: lg.transactionId } })).data, "link check");
console.log(
  JSON.stringify({
    qrGenerate: { status: qrStatus, md5: g.data.md5 },
    qrCheck: { status: c.status, same: c.transactionId === g.transactionId },
    qrVerify: v,
    qrDecode: { code: d.status.code, currency: d.data.transactionCurrency },
    gatewayGenerate: { status: gg.status, same: gg.orderId === orderId },
    gatewayCheck: { status: gc.status, same: gc.orderId === orderId },
    gatewayCheckUnknown: { http: unknown.response.status, code: unknown.error?.error.code },
    linkGenerate: { status: lg.status, currency: lg.requestData.currency },
    linkCheck: { status: lc.status, same: lc.transactionId === lg.transactionId },
  }),
);
`;

/** Three mistakes the generated types must refuse. */
const WRONG = `import createClient from "openapi-fetch";
import type { paths } from "./api.js";

const api = createClient<paths>({ baseUrl: "http://127.0.0.1" });
const qr = { params: { header: { "x-auth-type": "api-key" as const } } };
await api.POST("/qr/generate", { ...qr, body: { amount: 1, currency: "USD", expiredAfter: 60000 } });
await api.POST("/qr/check", { params: { header: { "x-auth-type": "api-gateway" } }, body: { md5: "x" } });
const g = (await api.POST("/gateway/check-status", { params: { header: { "x-auth-type": "api-gateway" } }, body: { transactionId: "t" } })).data;
if (g !== undefined) {
  const s: "CHECKOUT" | "SUCCESS" | "FAILED" | "EXPIRED" = g.status;
  const t: "PENDING" = g.status;
  console.log(s, t);
}
`;
