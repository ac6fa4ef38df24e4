import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { startTestApp, createTenant, type TestApp, type Tenant } from "../support/app.js";
import { gatewayModule } from "../../src/gateway/index.js";
import { webhooksModule } from "../../src/webhooks/index.js";
import { SecretBox } from "../../src/auth/secret-box.js";

// Issue 16, finding 6: secrets at rest are bound to their row (AES-GCM associated data) under a key derived
// with HKDF per purpose; rows stored in the earlier format still work and are rewritten.

const SECRET_KEY = "test-secret-key-0123456789-0123456789"; // what startTestApp configures

describe("secrets at rest", () => {
  let t: TestApp;
  let original: TestApp | undefined; // owns the database (dropped on its stop)
  let a: Tenant;
  let b: Tenant;
  let dbUrl: string;
  const query = <T>(sql: string, params: unknown[] = []) => t.app.core.db.query<T>(sql, params);
  const sealedOf = async (configId: string) =>
    (await query<{ s: string }>(`select api_secret_enc as s from gateway_config where id = ?`, [configId]))[0]!.s;

  beforeAll(async () => {
    t = await startTestApp();
    dbUrl = t.dbUrl;
    a = await createTenant(t, { name: "A", gatewaySecret: "secret-of-a-0123456789" });
    b = await createTenant(t, { name: "B", gatewaySecret: "secret-of-b-0123456789" });
  });
  afterAll(async () => {
    await t?.stop();
    if (original !== t) await original?.stop();
  });

  it("a gateway secret copied to another configuration's row does not decrypt there (an error, not A's secret)", async () => {
    const configs = t.app.module(gatewayModule).configs;
    expect((await configs.credentialsOf(a.gatewayConfigId))?.apiKey).toBe("secret-of-a-0123456789");
    await query(`update gateway_config set api_secret_enc = ? where id = ?`, [
      await sealedOf(a.gatewayConfigId),
      b.gatewayConfigId,
    ]);
    await expect(configs.credentialsOf(b.gatewayConfigId)).rejects.toThrow(/does not decrypt for this row/);
    // A's own row is untouched.
    expect((await configs.credentialsOf(a.gatewayConfigId))?.apiKey).toBe("secret-of-a-0123456789");
  });

  it("a webhook secret copied to another endpoint does not sign there", async () => {
    const endpoints = t.app.module(webhooksModule).endpoints;
    const one = await endpoints.create({ apiKeyId: a.keyIds.qr, url: "https://a.example/hook", secret: "whsec_a" });
    const two = await endpoints.create({ apiKeyId: b.keyIds.qr, url: "https://b.example/hook", secret: "whsec_b" });
    const [row] = await query<{ s: string }>(`select secret_enc as s from webhook_endpoint where id = ?`, [
      one.endpoint.id,
    ]);
    const moved = {
      endpointId: two.endpoint.id,
      secretEnc: row!.s,
      previousSecretEnc: null,
      previousSecretExpiresAt: null,
    };
    expect(() => endpoints.activeSecrets(moved)).toThrow(/does not decrypt for this row/);
    const own = { ...moved, endpointId: one.endpoint.id };
    expect(endpoints.activeSecrets(own)).toEqual(["whsec_a"]);
  });

  it("the key is derived per purpose: a gateway ciphertext does not open as a webhook secret of the same id", () => {
    const box = new SecretBox(SECRET_KEY);
    const sealed = box.seal("s3cret", "gateway-api-secret", "row-1");
    expect(box.open(sealed, "gateway-api-secret", "row-1")).toEqual({ plain: "s3cret", upgraded: null });
    expect(() => box.open(sealed, "webhook-endpoint-secret", "row-1")).toThrow(/does not decrypt/);
    expect(() => box.open(sealed, "gateway-api-secret", "row-2")).toThrow(/does not decrypt/);
    expect(() => new SecretBox(`${SECRET_KEY}x`).open(sealed, "gateway-api-secret", "row-1")).toThrow(
      /does not decrypt/,
    );
  });

  it("a row stored in the old format still works when read, and is rewritten in the new one bound to its row", async () => {
    const box = new SecretBox(SECRET_KEY);
    const legacy = box.sealLegacy("legacy-secret-0123456789");
    expect(legacy.startsWith("v1.")).toBe(true);
    await query(`update gateway_config set api_secret_enc = ? where id = ?`, [legacy, a.gatewayConfigId]);
    const configs = t.app.module(gatewayModule).configs;
    expect((await configs.credentialsOf(a.gatewayConfigId))?.apiKey).toBe("legacy-secret-0123456789");
    const upgraded = await sealedOf(a.gatewayConfigId);
    expect(upgraded.startsWith("v2.")).toBe(true);
    expect(box.open(upgraded, "gateway-api-secret", a.gatewayConfigId).plain).toBe("legacy-secret-0123456789");
    expect(() => box.open(upgraded, "gateway-api-secret", b.gatewayConfigId)).toThrow(/does not decrypt/);
  });

  it("rows in the old format that nobody reads are rewritten when the service starts", async () => {
    const box = new SecretBox(SECRET_KEY);
    const ep = await t.app
      .module(webhooksModule)
      .endpoints.create({ apiKeyId: a.keyIds.qr, url: "https://a.example/idle", secret: "whsec_idle" });
    await query(`update webhook_endpoint set secret_enc = ?, previous_secret_enc = ? where id = ?`, [
      box.sealLegacy("whsec_idle"),
      box.sealLegacy("whsec_idle_old"),
      ep.endpoint.id,
    ]);
    await query(`update gateway_config set api_secret_enc = ? where id = ?`, [
      box.sealLegacy("legacy-b-0123456789"),
      b.gatewayConfigId,
    ]);
    original = t;
    await t.app.stop(); // the database stays
    t = await startTestApp({}, { dbUrl });
    const [row] = await query<{ s: string; p: string }>(
      `select secret_enc as s, previous_secret_enc as p from webhook_endpoint where id = ?`,
      [ep.endpoint.id],
    );
    expect(box.open(row!.s, "webhook-endpoint-secret", ep.endpoint.id)).toEqual({
      plain: "whsec_idle",
      upgraded: null,
    });
    expect(box.open(row!.p, "webhook-endpoint-secret", ep.endpoint.id).plain).toBe("whsec_idle_old");
    const gw = await sealedOf(b.gatewayConfigId);
    expect(box.open(gw, "gateway-api-secret", b.gatewayConfigId)).toEqual({
      plain: "legacy-b-0123456789",
      upgraded: null,
    });
    const left = await query<{ n: string }>(
      `select count(*) as n from webhook_endpoint where secret_enc like 'v1.%' or previous_secret_enc like 'v1.%'`,
    );
    expect(Number(left[0]!.n)).toBe(0);
  });
});
