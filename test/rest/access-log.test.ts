import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import {
  startTestApp,
  createTenant,
  capturedLogger,
  post,
  AUTH,
  ADMIN_TOKEN,
  type TestApp,
  type Tenant,
} from "../support/app.js";
import { logSafeUrl } from "../../src/logger.js";
import { waitFor } from "../support/wait.js";

// The finding: a client token appeared in the access log, `/cards/<id>.svg?token=…` in both `url` and `query`.

describe("no credential reaches a log line", () => {
  let t: TestApp;
  let tenant: Tenant;
  const log = capturedLogger("info");
  beforeAll(async () => {
    t = await startTestApp({ LOG_LEVEL: "info", LOG_REQUESTS: "1" }, { logger: log.logger });
    tenant = await createTenant(t);
  });
  afterAll(async () => t?.stop());

  /** Waits for the access line of the request that carried `x-request-id: id`. */
  const accessLine = (id: string) =>
    waitFor(async () => log.lines.find((l) => l.includes(`"req":{"id":"${id}"`)), 5000, 20);

  it("client tokens in ?token=, API keys, bearer tokens and cookies are redacted in the access log", async () => {
    const g = await post(
      `${t.url}/qr/generate`,
      { amount: 1, currency: 840, expiredAfter: 60000 },
      { ...AUTH.qr(tenant.keys.qr), "x-request-id": "gen-1" },
    );
    expect(g.status).toBe(200);
    const { transactionId, clientToken } = g.body as { transactionId: string; clientToken: string };
    const card = await fetch(`${t.url}/cards/${transactionId}.svg?token=${encodeURIComponent(clientToken)}&size=2`, {
      headers: { "x-request-id": "card-1" },
    });
    expect(card.status).toBe(200);
    // A token given bare (no name) and one in a header the service does not read are no safer to log.
    const bare = await fetch(`${t.url}/cards/${transactionId}.png?${encodeURIComponent(clientToken)}`, {
      headers: { "x-request-id": "card-2", cookie: `session=${clientToken}` },
    });
    expect(bare.status).toBe(401);
    const gql = await post(
      `${t.url}/graphql`,
      { query: `query($id: ID!) { transaction(id: $id) { status } }`, variables: { id: transactionId } },
      {
        authorization: `Bearer ${clientToken}`,
        "x-request-id": "gql-1",
        "proxy-authorization": `Basic ${clientToken}`,
      },
    );
    expect(gql.status).toBe(200);
    const wrongKey = `${tenant.keys.qr.slice(0, -4)}zzzz`;
    const refused = await post(
      `${t.url}/qr/check`,
      { md5: "0".repeat(32) },
      { ...AUTH.qr(wrongKey), "x-request-id": "bad-1" },
    );
    expect(refused.status).toBe(401);

    const cardLine = JSON.parse(await accessLine("card-1")) as { msg: string; req: { url: string; query?: unknown } };
    expect(cardLine.req.url).toBe(`/cards/${transactionId}.svg?token=[Redacted]&size=[Redacted]`);
    expect(cardLine.msg).toContain(`/cards/${transactionId}.svg?token=[Redacted]&size=[Redacted]`);
    expect(cardLine.req.query).toBeUndefined();
    for (const id of ["gen-1", "card-2", "gql-1", "bad-1"]) await accessLine(id);
    const all = log.lines.join("\n");
    for (const secret of [clientToken, encodeURIComponent(clientToken), tenant.keys.qr, wrongKey, ADMIN_TOKEN])
      expect(all).not.toContain(secret);
  });

  it("a URL keeps its path and parameter names; values and name-less items are replaced", () => {
    expect(logSafeUrl("/cards/txn_1.svg")).toBe("/cards/txn_1.svg");
    expect(logSafeUrl("/cards/txn_1.svg?token=ct_abc.def&&x")).toBe("/cards/txn_1.svg?token=[Redacted]&x=[Redacted]");
    expect(logSafeUrl(`/graphql?${"ct_".padEnd(60, "a")}`)).toBe("/graphql?[Redacted]");
  });
});
