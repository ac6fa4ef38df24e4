import { readFileSync } from "node:fs";
import type { KeyKind } from "../auth/api-key.entity.js";
import { AUTH_TYPE, SECURITY_SCHEME, type JsonSchema } from "./openapi.js";

/**
 * Demo mode's /docs: examples that are live values of the demo tenant and the page authorised with its keys, so
 * "Try it out" → Execute answers 200 on all eight paths as shown. The values come from one transaction per area,
 * issued through the REST endpoints themselves with the demo keys the first time the document is asked for (the
 * tenant exists only once the demo seed has run), and kept for the life of the process.
 */
export interface DemoDocs {
  /** The document with every `{{…}}` of the examples replaced; unchanged where a value could not be had. */
  document(base: JsonSchema): Promise<JsonSchema>;
  /** Security scheme → key, for the page to authorise itself; null until demo.json exists. */
  keys(): Record<string, string> | null;
}

type Values = Partial<Record<KeyKind, Record<string, string>>>;
type DemoKeys = Record<KeyKind, string>;

const GENERATE: Record<KeyKind, { path: string; body: () => unknown }> = {
  qr: { path: "/qr/generate", body: () => ({ amount: 1.5, currency: 840, expiredAfter: 86_400_000 }) },
  gateway: {
    path: "/gateway/generate-qr",
    body: () => ({ qrData: { orderId: freshOrderId(), amount: 2.5, currency: "USD", lifetime: 1440 } }),
  },
  gateway_link: { path: "/gateway-link/generate-qr", body: () => ({ amount: 5000, currency: 116 }) },
};

/** Order ids are unique per merchant: each example generate gets a new one (at most 20 characters). */
function freshOrderId(): string {
  return `demo-${Date.now().toString(36)}${Math.floor(Math.random() * 36 ** 3).toString(36)}`.slice(0, 20);
}

function readKeys(demoFile: string): DemoKeys | null {
  try {
    const k = (JSON.parse(readFileSync(demoFile, "utf8")) as { keys?: Record<string, unknown> }).keys;
    if (typeof k?.qr !== "string" || typeof k.gateway !== "string" || typeof k.gatewayLink !== "string") return null;
    return { qr: k.qr, gateway: k.gateway, gateway_link: k.gatewayLink };
  } catch {
    return null; // not written yet: the demo tenant is created after the server starts
  }
}

/**
 * One generate per area not issued yet (an area whose generate fails — no Chromium for the payment-link area —
 * keeps its placeholders and is tried again next time).
 */
async function issueMissing(baseUrl: string, keys: DemoKeys, values: Values): Promise<void> {
  for (const kind of Object.keys(GENERATE) as KeyKind[]) {
    if (values[kind] !== undefined) continue;
    const res = await fetch(`${baseUrl}${GENERATE[kind].path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": keys[kind], "x-auth-type": AUTH_TYPE[kind] },
      body: JSON.stringify(GENERATE[kind].body()),
    }).catch(() => null);
    if (res === null || res.status !== 200) continue;
    const b = (await res.json()) as { transactionId: string; orderId?: string; data?: { md5?: string; qr?: string } };
    values[kind] = {
      transactionId: b.transactionId,
      ...(b.orderId ? { orderId: b.orderId } : {}),
      ...(b.data?.md5 ? { md5: b.data.md5 } : {}),
      ...(b.data?.qr ? { qr: b.data.qr } : {}),
    };
  }
}

/** Which area a path's example draws on (its key's). */
const kindOf = (path: string): KeyKind =>
  path.startsWith("/gateway-link/") ? "gateway_link" : path.startsWith("/gateway/") ? "gateway" : "qr";

function fill(example: unknown, path: string, values: Values): unknown {
  const mine = values[kindOf(path)] ?? {};
  const text = JSON.stringify(example).replace(/\{\{(\w+)\}\}/g, (whole, name: string) => {
    // A generate takes a new order id every time; a check reads the one already issued.
    if (name === "orderId" && /generate/.test(path)) return freshOrderId();
    return mine[name] ?? whole;
  });
  return JSON.parse(text);
}

export function demoDocs(baseUrl: string, demoFile: string): DemoDocs {
  const values: Values = {};
  let issuing: Promise<void> | null = null;
  return {
    keys() {
      const k = readKeys(demoFile);
      if (k === null) return null;
      return Object.fromEntries((Object.keys(k) as KeyKind[]).map((kind) => [SECURITY_SCHEME[kind], k[kind]]));
    },
    async document(base) {
      const keys = readKeys(demoFile);
      if (keys === null) return base;
      if (Object.keys(values).length < Object.keys(GENERATE).length)
        await (issuing ??= issueMissing(baseUrl, keys, values).finally(() => (issuing = null)));
      const doc = structuredClone(base) as { paths: Record<string, { post: JsonSchema }> };
      for (const [path, item] of Object.entries(doc.paths)) {
        const content = (item.post.requestBody as { content: Record<string, { example?: unknown }> }).content;
        const json = content["application/json"];
        if (json?.example !== undefined) json.example = fill(json.example, path, values);
      }
      return doc;
    },
  };
}
