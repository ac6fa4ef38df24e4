import { ADMIN_TOKEN } from "./service.js";

/** The admin GraphQL API of a running service (bearer ADMIN_TOKEN), as the dashboard uses it. */
export async function admin<T>(baseUrl: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch(`${baseUrl}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${ADMIN_TOKEN}` },
    body: JSON.stringify({ query, variables }),
  });
  const json = (await res.json()) as { data?: T; errors?: { message: string }[] };
  if (json.errors?.length) throw new Error(`admin GraphQL error: ${json.errors.map((e) => e.message).join("; ")}`);
  return json.data as T;
}

export interface BenchKey {
  merchantId: string;
  keyId: string;
  apiKey: string;
}

export async function createMerchant(baseUrl: string, name: string): Promise<string> {
  const { createMerchant } = await admin<{ createMerchant: { id: string } }>(
    baseUrl,
    `mutation($input: MerchantInput!) { createMerchant(input: $input) { id } }`,
    {
      input: {
        name,
        accountType: "merchant",
        bakongAccountId: "bench_shop@devb",
        merchantName: name,
        merchantCity: "Phnom Penh",
        merchantId: "BENCH01",
        acquiringBank: "Dev Bank",
        defaultCurrency: 840,
      },
    },
  );
  return createMerchant.id;
}

/** A generic-QR API key of the merchant. */
export async function createQrKey(baseUrl: string, merchantId: string): Promise<BenchKey> {
  const { createApiKey } = await admin<{ createApiKey: { apiKey: string; key: { id: string } } }>(
    baseUrl,
    `mutation($input: ApiKeyInput!) { createApiKey(input: $input) { apiKey key { id } } }`,
    { input: { merchantId, kind: "qr" } },
  );
  return { merchantId, keyId: createApiKey.key.id, apiKey: createApiKey.apiKey };
}

export async function createWebhookEndpoint(
  baseUrl: string,
  apiKeyId: string,
  url: string,
  events: string[],
): Promise<{ id: string; secret: string }> {
  const { createWebhookEndpoint } = await admin<{
    createWebhookEndpoint: { secret: string; endpoint: { id: string } };
  }>(baseUrl, `mutation($i: WebhookEndpointInput!) { createWebhookEndpoint(input: $i) { secret endpoint { id } } }`, {
    i: { apiKeyId, url, events },
  });
  return { id: createWebhookEndpoint.endpoint.id, secret: createWebhookEndpoint.secret };
}

export const QR_AUTH = (apiKey: string) => ({ "x-api-key": apiKey, "x-auth-type": "api-key" });
