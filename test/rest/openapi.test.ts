import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { ROUTES, restOpenApi } from "../../src/app.js";
import { EVENT_TYPES } from "../../src/transactions/transaction-event.entity.js";
import { AUTH, post } from "../support/app.js";
import { checkRestAnswer, checked } from "../support/openapi-contract.js";
import { startDemoService, type DemoService } from "../support/demo-service.js";
import { waitFor } from "../support/wait.js";
import { statusOf } from "../support/http.js";

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- walking a JSON document

/** The REST shim's OpenAPI 3.1 document: generated from the route table and the schema, served, rendered, true. */
describe("OpenAPI document of the REST shim", () => {
  let doc: Obj;
  let svc: DemoService;
  beforeAll(async () => {
    doc = (await restOpenApi()) as Obj;
    svc = await startDemoService("openapi");
  }, 120_000);
  afterAll(async () => {
    await svc?.dispose();
  });

  it("is valid OpenAPI 3.1 by a maintained validator", async () => {
    const result = await new Validator().validate(doc as never);
    expect(result).toEqual({ valid: true });
    expect(doc.openapi).toBe("3.1.0");
  });

  it("has every route with its headers, request schema and each response with the error body", () => {
    expect(Object.keys(doc.paths).sort()).toEqual(ROUTES.map((r) => r.path).sort());
    expect(Object.keys(doc.paths)).toHaveLength(8);
    for (const route of ROUTES) {
      const op = doc.paths[route.path].post;
      const authType = { qr: "api-key", gateway: "api-gateway", gateway_link: "api-gateway-link" }[route.kind];
      expect(op.parameters).toContainEqual(
        expect.objectContaining({
          name: "x-auth-type",
          in: "header",
          required: true,
          schema: { type: "string", const: authType },
        }),
      );
      // One scheme per kind of key: /docs asks for each once and sends each path its own.
      const scheme = ({ qr: "qrKey", gateway: "gatewayKey", gateway_link: "gatewayLinkKey" } as Record<string, string>)[
        route.kind
      ];
      expect(op.security).toEqual([{ [scheme]: [] }]);
      const generate = /generate/.test(route.path);
      expect(op.parameters.some((p: Obj) => p.name === "Idempotency-Key")).toBe(generate);
      expect(op.requestBody.content["application/json"].schema.type).toBe("object");
      expect(op.requestBody.content["application/json"].example).toEqual(route.doc.example);
      for (const status of ["200", "400", "401", "408", "413", "429", "431", "500", "503"])
        expect(op.responses).toHaveProperty(status);
      for (const [status, r] of Object.entries(op.responses as Obj))
        if (status !== "200") expect(r.content["application/json"].schema.required).toEqual(["error"]);
    }
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(["gatewayKey", "gatewayLinkKey", "qrKey"]);
    for (const s of Object.values(doc.components.securitySchemes as Obj))
      expect(s).toEqual(expect.objectContaining({ type: "apiKey", in: "header", name: "x-api-key" }));
    expect(Object.keys(doc.paths["/gateway/check-status"].post.responses)).toContain("404");
    expect(Object.keys(doc.paths["/gateway/generate-qr"].post.responses)).toEqual(
      expect.arrayContaining(["409", "502"]),
    );
    // Request schemas come from the input classes: the rules a caller must follow are there.
    const gw = doc.paths["/gateway/generate-qr"].post.requestBody.content["application/json"].schema;
    expect(gw.required).toEqual(["qrData"]);
    expect(gw.properties.qrData.required).toEqual(["orderId", "currency", "amount"]);
    // The gateway's documented bounds (src/gateway/gateway-rules.ts), as the code checks them.
    const qrData = gw.properties.qrData.properties;
    expect(qrData.lifetime).toMatchObject({ type: "integer", minimum: 3, maximum: 43200 });
    expect(qrData.lifetime.description).toMatch(/3 to 43200/);
    expect(qrData.orderId).toMatchObject({ minLength: 1, maxLength: 20, pattern: "^[A-Za-z0-9-]+$" });
    for (const name of ["firstName", "lastName"]) expect(qrData[name]).toMatchObject({ maxLength: 20 });
    expect(new RegExp(qrData.firstName.pattern, "u").test("សុខា Chan")).toBe(true);
    expect(new RegExp(qrData.firstName.pattern, "u").test("R2D2")).toBe(false);
    expect(qrData.email).toMatchObject({ maxLength: 50 });
    expect(qrData.phone).toMatchObject({ maxLength: 20, pattern: "^\\+?[0-9]{8,20}$" });
    expect(qrData.qrImageTemplate.enum).toHaveLength(10);
    expect(qrData.qrImageTemplate.enum).toContain("template3_color");
    expect(qrData.items).toMatchObject({ maxItems: 10 });
  });

  it("has a webhooks section: every event type, its payload and the x-timestamp / x-signature headers", () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const op = doc.webhooks[type].post;
      expect(op.parameters.map((p: Obj) => p.name)).toEqual([
        "x-timestamp",
        "x-signature",
        "x-event-id",
        "x-event-type",
      ]);
      expect(op.requestBody.content["application/json"].schema.properties.type).toEqual({
        type: "string",
        const: type,
      });
    }
  });

  it("serves /openapi.json as generated, and /docs from local assets under the strict CSP", async () => {
    const served = (await (await fetch(`${svc.url}/openapi.json`)).json()) as Obj;
    // The same document; only the demo's examples differ (live values).
    const withoutExamples = (d: Obj) => {
      const copy = structuredClone(d);
      for (const p of Object.values(copy.paths as Obj)) delete p.post.requestBody.content["application/json"].example;
      delete copy.info.description;
      return copy;
    };
    expect(withoutExamples(served)).toEqual(withoutExamples(doc));
    const page = await fetch(`${svc.url}/docs`);
    expect(page.headers.get("content-security-policy")).toMatch(/script-src 'self';/);
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(assets.every((a) => a.startsWith("/docs/"))).toBe(true);
    for (const a of assets) expect(await statusOf(`${svc.url}${a}`)).toBe(200);
    expect(await statusOf(`${svc.url}/docs/vendor/package.json`)).toBe(404);
  });

  it("in demo mode every example is a live value of the demo tenant: each runs as shown, with its own kind of key", async () => {
    const before = checked.count;
    const served = (await (await fetch(`${svc.url}/openapi.json`)).json()) as Obj;
    const keys: Record<string, Record<string, string>> = {
      qr: AUTH.qr(svc.demo.keys.qr),
      gateway: AUTH.gateway(svc.demo.keys.gateway),
      gateway_link: AUTH.gatewayLink(svc.demo.keys.gatewayLink),
    };
    for (const route of ROUTES) {
      const example = served.paths[route.path].post.requestBody.content["application/json"].example;
      expect({ path: route.path, placeholders: JSON.stringify(example).match(/\{\{\w+\}\}/g) }).toEqual({
        path: route.path,
        placeholders: null,
      });
      const r = await post(`${svc.url}${route.path}`, example, keys[route.kind]);
      expect({ path: route.path, status: r.status }).toEqual({ path: route.path, status: 200 });
    }
    expect(checked.count - before).toBe(8);
    // A generate example takes a new order id each time the document is read: Execute works again after a reload.
    const again = (await (await fetch(`${svc.url}/openapi.json`)).json()) as Obj;
    const orderId = (d: Obj) => d.paths["/gateway/generate-qr"].post.requestBody.content["application/json"].example;
    expect(orderId(again).qrData.orderId).not.toBe(orderId(served).qrData.orderId);
  }, 60_000);

  it("a real delivery of each event the demo produced matches the webhooks section", async () => {
    const ajv = new Ajv2020({ strict: false });
    (addFormats as unknown as (a: Ajv2020) => void)(ajv);
    const g = await post(
      `${svc.url}/qr/generate`,
      { amount: 1, currency: 840, expiredAfter: 60000 },
      AUTH.qr(svc.demo.keys.qr),
    );
    await post(`${svc.url}/sim/network/pay`, { md5: (g.body as Obj).data.md5 });
    const inbox = await waitFor(async () => {
      const list = (await (await fetch(`${svc.url}/sim/inbox`)).json()) as { headers: Obj; body: string }[];
      return list.some((e) => JSON.parse(e.body).type === "payment.completed") ? list : null;
    }, 15_000);
    for (const e of inbox) {
      const body = JSON.parse(e.body);
      const op = doc.webhooks[body.type].post;
      const validate = ajv.compile(op.requestBody.content["application/json"].schema);
      expect({ type: body.type, ok: validate(body), errors: validate.errors }).toEqual({
        type: body.type,
        ok: true,
        errors: null,
      });
      for (const p of op.parameters) expect(e.headers[p.name]).toMatch(new RegExp(p.schema.pattern ?? "."));
    }
  }, 30_000);

  it("the shared REST helper's check refuses an answer the document does not describe", async () => {
    const url = `${svc.url}/qr/check`;
    const ok = {
      transactionId: "t",
      status: "PENDING",
      data: { qr: "q", md5: "m" },
      requestData: { meta: {}, amount: 1, currency: 840, expiredAfter: 1 },
      expiredAt: "x",
    };
    await expect(checkRestAnswer(url, 200, ok)).resolves.toBeUndefined();
    await expect(checkRestAnswer(url, 200, { ...ok, extra: 1 })).rejects.toThrow(/does not match/);
    await expect(checkRestAnswer(url, 200, { ...ok, status: undefined })).rejects.toThrow(/does not match/);
    await expect(checkRestAnswer(url, 418, {})).rejects.toThrow(/does not list/);
    await expect(checkRestAnswer(url, 404, { error: { code: "NOT_FOUND", message: "m" } })).rejects.toThrow(
      /does not match/,
    );
    await expect(
      checkRestAnswer(url, 404, { error: { code: "BAD_USER_INPUT", message: "m", details: [] } }),
    ).rejects.toThrow();
  });
});
