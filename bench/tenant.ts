// A bench tenant created through the admin GraphQL API, as an operator would (mirrors test/support/app.ts).

import { demoLinkUrl } from "../src/simulators/demo-upstreams.js";

export const AUTH = {
  qr: (key: string) => ({ "x-api-key": key, "x-auth-type": "api-key" }),
  gateway: (key: string) => ({ "x-api-key": key, "x-auth-type": "api-gateway" }),
  gatewayLink: (key: string) => ({ "x-api-key": key, "x-auth-type": "api-gateway-link" }),
};

export interface BenchTenant {
  merchantId: string;
  keys: { qr: string; gateway: string; gatewayLink: string };
  /** The keys' ids (webhook endpoints are created per key). */
  keyIds: { qr: string; gateway: string; gatewayLink: string };
}

/** POST JSON; throws unless the answer is 2xx. */
export async function postJson<T>(url: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${url} → ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

export function adminClient(baseUrl: string, adminToken: string) {
  return async <T>(query: string, variables: Record<string, unknown> = {}): Promise<T> => {
    const json = await postJson<{ data?: T; errors?: { message: string }[] }>(
      `${baseUrl}/graphql`,
      { query, variables },
      { authorization: `Bearer ${adminToken}` },
    );
    if (json.errors?.length) throw new Error(`admin GraphQL error: ${json.errors.map((e) => e.message).join("; ")}`);
    return json.data as T;
  };
}

/**
 * A merchant with one key of each kind. The gateway configuration is registered with the simulated
 * gateway, and the payment-link configuration points at the simulated page (both in `simUrl`).
 */
export async function createTenant(baseUrl: string, adminToken: string, simUrl: string): Promise<BenchTenant> {
  const admin = adminClient(baseUrl, adminToken);
  const { createMerchant: m } = await admin<{ createMerchant: { id: string } }>(
    `mutation($input: MerchantInput!) { createMerchant(input: $input) { id } }`,
    {
      input: {
        name: "Bench Shop",
        accountType: "merchant",
        bakongAccountId: "bench_shop@devb",
        merchantName: "Bench Shop",
        merchantCity: "Phnom Penh",
        merchantId: "BS001",
        acquiringBank: "Dev Bank",
        defaultCurrency: 840,
      },
    },
  );
  const upstream = { merchantId: `bench_${m.id.slice(-8)}`, apiKey: "bench-gateway-secret-0123456789" };
  await postJson(`${simUrl}/sim/gateway/merchants`, upstream);
  const { createGatewayConfig: g } = await admin<{ createGatewayConfig: { id: string } }>(
    `mutation($input: GatewayConfigInput!) { createGatewayConfig(input: $input) { id } }`,
    { input: { merchantId: m.id, name: "gw", upstreamMerchantId: upstream.merchantId, apiSecret: upstream.apiKey } },
  );
  const { createLinkConfig: l } = await admin<{ createLinkConfig: { id: string } }>(
    `mutation($input: LinkConfigInput!) { createLinkConfig(input: $input) { id } }`,
    // The PayWay twin's KHR link (bench/sim-upstreams.ts), followed without a page as production follows one.
    { input: { merchantId: m.id, name: "link", url: demoLinkUrl(simUrl), currency: 116, protocol: "payway" } },
  );
  const key = async (kind: string, extra: Record<string, string>) =>
    (
      await admin<{ createApiKey: { apiKey: string; key: { id: string } } }>(
        `mutation($input: ApiKeyInput!) { createApiKey(input: $input) { apiKey key { id } } }`,
        { input: { merchantId: m.id, kind, ...extra } },
      )
    ).createApiKey;
  const [qr, gateway, gatewayLink] = [
    await key("qr", {}),
    await key("gateway", { gatewayConfigId: g.id }),
    await key("gateway_link", { linkConfigId: l.id }),
  ];
  return {
    merchantId: m.id,
    keys: { qr: qr.apiKey, gateway: gateway.apiKey, gatewayLink: gatewayLink.apiKey },
    keyIds: { qr: qr.key.id, gateway: gateway.key.id, gatewayLink: gatewayLink.key.id },
  };
}
