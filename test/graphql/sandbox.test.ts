import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { buildSchema, Kind, parse, print, validate, type OperationDefinitionNode } from "graphql";
import { sandboxExample } from "../../src/graphql/sandbox.js";
import { AUTH, createTenant, post, startTestApp, type Tenant, type TestApp } from "../support/app.js";
import { subscribe } from "../support/ws.js";
import { waitFor } from "../support/wait.js";
import { areasOf, MODULES, schemaSdl } from "../../src/app.js";

/** What the app of the default module list opens Sandbox with. */
const {
  document: SANDBOX_DOCUMENT,
  headers: SANDBOX_HEADERS,
  variables: SANDBOX_VARIABLES,
} = sandboxExample(areasOf(MODULES));

/** Apollo Sandbox on /graphql opens with a generate, a check and a client-token subscription that run. */
describe("Apollo Sandbox's example operations", () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp({ QR_MONITOR_INTERVAL_MS: "250" });
    tenant = await createTenant(t);
  }, 60_000);
  afterAll(async () => t?.stop());

  const operation = (name: string) => {
    const op = parse(SANDBOX_DOCUMENT).definitions.find(
      (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION && d.name?.value === name,
    );
    if (!op) throw new Error(`no operation ${name}`);
    return { query: SANDBOX_DOCUMENT, operationName: name, op };
  };

  it("/graphql in a browser is Sandbox with the example document, variables and headers", async () => {
    const res = await fetch(`${t.url}/graphql`, { headers: { accept: "text/html" } });
    expect(res.status).toBe(200);
    const html = await res.text();
    for (const s of ["mutation GenerateQr", "query CheckQr", "subscription WatchWithClientToken", "x-auth-type"])
      expect(html).toContain(s);
    expect(html).toMatch(/embeddable-sandbox/);
    expect(SANDBOX_HEADERS["x-auth-type"]).toBe("api-key");
  });

  it("the document holds one operation of each kind, valid against the schema", async () => {
    const doc = parse(SANDBOX_DOCUMENT);
    expect(validate(buildSchema(await schemaSdl()), doc)).toEqual([]);
    const kinds = doc.definitions.map((d) => (d as OperationDefinitionNode).operation).sort();
    expect(kinds).toEqual(["mutation", "query", "subscription"]);
  });

  it("they run: generate with the key, pay, check → SUCCESS, and the subscription sees it with the clientToken alone", async () => {
    const gql = async (name: string, variables: Record<string, unknown>) => {
      const { query, operationName } = operation(name);
      const res = await post(`${t.url}/graphql`, { query, operationName, variables }, AUTH.qr(tenant.keys.qr));
      return res.body as { data?: Record<string, Record<string, unknown>>; errors?: unknown[] };
    };
    const g = await gql("GenerateQr", { input: SANDBOX_VARIABLES.input });
    expect(g.errors).toBeUndefined();
    const tx = g.data?.generateQr as { transactionId: string; clientToken: string; data: { md5: string } };
    const watch = operation("WatchWithClientToken");
    const { sub } = subscribe<{ transactionUpdated: { type: string; transaction: { status: string } } }>(
      t.url,
      { clientToken: tx.clientToken },
      print(watch.op),
      { transactionId: tx.transactionId },
    );
    await post(`${t.url}/sim/network/pay`, { md5: tx.data.md5 });
    await sub.done;
    expect(sub.error).toBeNull();
    expect(sub.events.map((e) => e.transactionUpdated.transaction.status)).toContain("SUCCESS");
    const c = await gql("CheckQr", { md5: tx.data.md5 });
    expect(c.data?.qrTransaction).toMatchObject({ transactionId: tx.transactionId, status: "SUCCESS" });
    // The same subscription with the token as a bearer header (Sandbox's shared headers) works too.
    const bearer = subscribe<{ transactionUpdated: { transaction: { status: string } } }>(
      t.url,
      { authorization: `Bearer ${tx.clientToken}` },
      print(watch.op),
      { transactionId: tx.transactionId },
    );
    await bearer.sub.done;
    expect(bearer.sub.events.at(-1)?.transactionUpdated.transaction.status).toBe("SUCCESS");
  }, 30_000);

  it("a client token runs its operation of the whole document (over graphql-ws and HTTP); the others are refused by their own fields", async () => {
    const issued = await post(
      `${t.url}/graphql`,
      { query: SANDBOX_DOCUMENT, operationName: "GenerateQr", variables: { input: SANDBOX_VARIABLES.input } },
      AUTH.qr(tenant.keys.qr),
    );
    const tx = (issued.body as { data: { generateQr: { transactionId: string; clientToken: string } } }).data
      .generateQr;
    const bearer = { authorization: `Bearer ${tx.clientToken}` };
    // The shipped document as GraphiQL sends it: every operation, the one to run named.
    const watch = subscribe<{ transactionUpdated: { transaction: { status: string } } }>(
      t.url,
      bearer,
      SANDBOX_DOCUMENT,
      { transactionId: tx.transactionId },
      "WatchWithClientToken",
    );
    await waitFor(() => watch.sub.events.length > 0 || watch.sub.error !== null, 10_000);
    expect(watch.sub.error).toBeNull();
    expect(watch.sub.events[0]?.transactionUpdated.transaction.status).toBe("PENDING");
    watch.sub.close();
    // Over HTTP: the operation run is judged, and a refusal names its fields only.
    const both = `query Mine($id: ID!) { transaction(id: $id) { status } }\n${SANDBOX_DOCUMENT}`;
    const mine = await post(
      `${t.url}/graphql`,
      { query: both, operationName: "Mine", variables: { id: tx.transactionId } },
      bearer,
    );
    expect(mine.body).toEqual({ data: { transaction: { status: "PENDING" } } });
    const check = await post(
      `${t.url}/graphql`,
      { query: both, operationName: "CheckQr", variables: { md5: "0".repeat(32) } },
      bearer,
    );
    expect(check.status).toBe(403);
    const message = (check.body as { errors: { message: string }[] }).errors[0].message;
    expect(message).toMatch(/Query\.qrTransaction/);
    expect(message).not.toMatch(/generateQr|transactionUpdated/);
  }, 30_000);
});
