import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { PNG } from "pngjs";
import jsqrModule from "jsqr";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { statusOf } from "../support/http.js";

// Issue 20, point 6: the KHQR card per transaction, as PNG and SVG, decoded back with a QR reader.

interface QrTx {
  transactionId: string;
  data: { qr: string };
  clientToken: string;
}

/** jsqr is CommonJS: its function is the default export under one interop and `.default` under another. */
type JsQr = (data: Uint8ClampedArray, width: number, height: number) => { data: string } | null;
const jsQR = ((jsqrModule as unknown as { default?: JsQr }).default ?? jsqrModule) as unknown as JsQr;

function decodePng(buf: Buffer): string | null {
  const png = PNG.sync.read(buf);
  return (
    jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height)?.data ??
    null
  );
}

describe("KHQR card: GET /cards/{transactionId}.png|.svg and GraphQL cardImage", () => {
  let t: TestApp;
  let tenant: Tenant;
  let other: Tenant;
  const gen = async (amount: number, currency: number) =>
    (await post(`${t.url}/qr/generate`, { amount, currency, expiredAfter: 60_000 }, AUTH.qr(tenant.keys.qr)))
      .body as QrTx;
  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t);
    other = await createTenant(t, { name: "Other" });
  });
  afterAll(async () => t?.stop());

  it("the PNG decodes (with a QR reader) to the transaction's own KHQR string; portrait 2:3", async () => {
    for (const [amount, currency] of [
      [12.5, 840],
      [40000, 116],
    ]) {
      const tx = await gen(amount, currency);
      const res = await fetch(`${t.url}/cards/${tx.transactionId}.png`, { headers: AUTH.qr(tenant.keys.qr) });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("image/png");
      const buf = Buffer.from(await res.arrayBuffer());
      const png = PNG.sync.read(buf);
      expect(png.height / png.width).toBeCloseTo(1.5, 2);
      expect(decodePng(buf)).toBe(tx.data.qr);
    }
  });

  it("the SVG carries the KHQR mark, the merchant name, the amount with its currency and a dashed divider", async () => {
    const tx = await gen(1234.5, 840);
    const res = await fetch(`${t.url}/cards/${tx.transactionId}.svg`, { headers: AUTH.qr(tenant.keys.qr) });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    const svg = await res.text();
    expect(svg).toContain(">KHQR</text>");
    expect(svg).toContain("Test Shop");
    expect(svg).toMatch(/1,234\.50<tspan[^>]*>USD<\/tspan>/);
    expect(svg).toContain('stroke-dasharray="8 6"');
    expect(svg).toContain('fill="#E1232E"');
  });

  it("?token=<clientToken> works for its own transaction only (an <img> can use it); others see nothing", async () => {
    const tx = await gen(3, 840);
    const second = await gen(4, 840);
    const byToken = await fetch(`${t.url}/cards/${tx.transactionId}.png?token=${encodeURIComponent(tx.clientToken)}`);
    expect(byToken.status).toBe(200);
    expect(decodePng(Buffer.from(await byToken.arrayBuffer()))).toBe(tx.data.qr);
    const wrongTx = await fetch(
      `${t.url}/cards/${second.transactionId}.png?token=${encodeURIComponent(tx.clientToken)}`,
    );
    expect(wrongTx.status).toBe(404);
    const otherKey = await fetch(`${t.url}/cards/${tx.transactionId}.svg`, { headers: AUTH.qr(other.keys.qr) });
    expect(otherKey.status).toBe(404);
    expect(await otherKey.json()).toEqual({ error: { code: "NOT_FOUND", message: expect.any(String), details: [] } });
    const anonymous = await fetch(`${t.url}/cards/${tx.transactionId}.png`);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe("UNAUTHENTICATED");
    expect(await statusOf(`${t.url}/cards/${tx.transactionId}.gif`, { headers: AUTH.qr(tenant.keys.qr) })).toBe(404);
  });

  it("GraphQL cardImage gives the same card as a data URL", async () => {
    const tx = await gen(7, 840);
    const res = await fetch(`${t.url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", ...AUTH.qr(tenant.keys.qr) },
      body: JSON.stringify({
        query: `query($id: ID!) { cardImage(transactionId: $id) }`,
        variables: { id: tx.transactionId },
      }),
    });
    const json = (await res.json()) as { data: { cardImage: string } };
    expect(json.data.cardImage).toMatch(/^data:image\/png;base64,/);
    const buf = Buffer.from(json.data.cardImage.split(",")[1], "base64");
    expect(decodePng(buf)).toBe(tx.data.qr);
  });
});
