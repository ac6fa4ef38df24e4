// What the load bench sends: the eight REST endpoints and the main GraphQL operations, each with bodies that
// succeed (the check endpoints rotate through transactions created beforehand), plus the baseline.
import { AUTH, postJson, type BenchTenant } from "./tenant.js";

export interface Target {
  name: string;
  /** "service" or "baseline": which server it is sent to. */
  server: "service" | "baseline";
  path: string;
  headers: Record<string, string>;
  bodies: string[];
  expect: "json" | "graphql";
  /** Overrides of the default concurrency / duration (gateway-link generation drives Chromium). */
  connections?: number;
  amount?: number;
  /** Which baseline its row is compared with: the bare INSERT (default) or the gateway call + INSERT. */
  baseline?: "insert" | "gateway";
}

export interface Seed {
  md5s: string[];
  qrs: string[];
  gatewayIds: string[];
  linkIds: string[];
}

/** How long seeded QRs live: beyond the whole run, so no read expires one while it is measured. */
const SEED_EXPIRY_MS = 3_600_000;

const QR_BODIES = [1.5, 2.25, 10, 0.99, 45.1].map((amount) =>
  JSON.stringify({ amount, currency: 840, expiredAfter: SEED_EXPIRY_MS, meta: { order: "{{n}}" } }),
);

async function pool<T>(n: number, concurrency: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await fn(i);
      }
    }),
  );
  return out;
}

/**
 * Transactions for the check endpoints to read. Gateway-link ones are approved on the simulated page at
 * once, so their monitors end and close their browser pages before anything is measured.
 */
export async function seed(
  baseUrl: string,
  simUrl: string,
  tenant: BenchTenant,
  counts: { qr: number; gateway: number; link: number },
): Promise<Seed> {
  const qr = await pool(counts.qr, 8, (i) =>
    postJson<{ data: { qr: string; md5: string } }>(
      `${baseUrl}/qr/generate`,
      { amount: (100 + i) / 100, currency: 840, expiredAfter: SEED_EXPIRY_MS },
      AUTH.qr(tenant.keys.qr),
    ),
  );
  const gw = await pool(counts.gateway, 8, (i) =>
    postJson<{ transactionId: string }>(
      `${baseUrl}/gateway/generate-qr`,
      { qrData: { orderId: `seed-${i}`, amount: 2.5, currency: "USD", lifetime: 60 } },
      AUTH.gateway(tenant.keys.gateway),
    ),
  );
  const link = await pool(counts.link, 2, () =>
    postJson<{ transactionId: string; data: { clientId: string } }>(
      `${baseUrl}/gateway-link/generate-qr`,
      { amount: 5000, currency: 116, meta: { seed: true } },
      AUTH.gatewayLink(tenant.keys.gatewayLink),
    ),
  );
  for (const l of link) await postJson(`${simUrl}/sim/link/approve`, { clientId: l.data.clientId });
  return {
    md5s: qr.map((r) => r.data.md5),
    qrs: qr.map((r) => r.data.qr),
    gatewayIds: gw.map((r) => r.transactionId),
    linkIds: link.map((r) => r.transactionId),
  };
}

const gql = (query: string, variables: Record<string, unknown>) => JSON.stringify({ query, variables });

export function targets(tenant: BenchTenant, s: Seed, link: { connections: number; amount: number }): Target[] {
  const qr = AUTH.qr(tenant.keys.qr);
  const gw = AUTH.gateway(tenant.keys.gateway);
  const gl = AUTH.gatewayLink(tenant.keys.gatewayLink);
  const svc = (
    name: string,
    path: string,
    headers: Record<string, string>,
    bodies: string[],
    extra: Partial<Target> = {},
  ): Target => ({
    name,
    server: "service",
    path,
    headers,
    bodies,
    expect: path === "/graphql" ? "graphql" : "json",
    ...extra,
  });
  return [
    svc("POST /qr/generate", "/qr/generate", qr, QR_BODIES),
    svc(
      "POST /qr/check",
      "/qr/check",
      qr,
      s.md5s.map((md5) => JSON.stringify({ md5 })),
    ),
    svc(
      "POST /qr/verify",
      "/qr/verify",
      qr,
      s.qrs.map((qrData) => JSON.stringify({ qrData })),
    ),
    svc(
      "POST /qr/decode",
      "/qr/decode",
      qr,
      s.qrs.map((qrData) => JSON.stringify({ qrData })),
    ),
    svc("POST /gateway/generate-qr", "/gateway/generate-qr", gw, [GATEWAY_BODY], { baseline: "gateway" }),
    svc(
      "POST /gateway/check-status",
      "/gateway/check-status",
      gw,
      s.gatewayIds.map((transactionId) => JSON.stringify({ transactionId })),
    ),
    svc(
      "POST /gateway-link/check",
      "/gateway-link/check",
      gl,
      s.linkIds.map((transactionId) => JSON.stringify({ transactionId })),
    ),
    svc(
      "GraphQL generateQr",
      "/graphql",
      qr,
      QR_BODIES.map((b) =>
        gql(
          `mutation($input: GenerateQrInput!) { generateQr(input: $input) { transactionId expiredAt status data { qr md5 } clientToken } }`,
          { input: JSON.parse(b) },
        ),
      ),
    ),
    svc(
      "GraphQL qrTransaction",
      "/graphql",
      qr,
      s.md5s.map((md5) =>
        gql(`query($md5: String!) { qrTransaction(md5: $md5) { transactionId status expiredAt data { md5 } } }`, {
          md5,
        }),
      ),
    ),
    svc("GraphQL transactions(first: 20)", "/graphql", qr, [
      gql(
        `query { transactions(first: 20) { edges { cursor node { id status amount currency md5 createdAt } } pageInfo { hasNextPage endCursor } } }`,
        {},
      ),
    ]),
    // Last: every generated QR holds a browser page for up to 180 s, so nothing is measured after it.
    svc(
      "POST /gateway-link/generate-qr",
      "/gateway-link/generate-qr",
      gl,
      [JSON.stringify({ amount: 5000, currency: 116, meta: { order: "{{n}}" } })],
      link,
    ),
  ];
}

const GATEWAY_BODY = JSON.stringify({
  qrData: { orderId: "{{n}}", amount: 1.25, currency: "USD", lifetime: 60 },
  metaData: { shop: "bench" },
});

export function baselineTarget(connections?: number, kind: "insert" | "gateway" = "insert"): Target {
  return kind === "insert"
    ? {
        name: "baseline: bare express + single INSERT",
        server: "baseline",
        path: "/insert",
        headers: {},
        bodies: QR_BODIES,
        expect: "json",
        connections,
        baseline: "insert",
      }
    : {
        name: "baseline: bare express + one gateway generate-qr call + INSERT",
        server: "baseline",
        path: "/gateway-insert",
        headers: {},
        bodies: [GATEWAY_BODY],
        expect: "json",
        connections,
        baseline: "gateway",
      };
}
