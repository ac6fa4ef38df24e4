import type { AreaDemo } from "../module.js";
import type { Db } from "../db/sql.js";
import { createNetworkSimulator } from "../simulators/network/index.js";
import { mountSimulator } from "../simulators/http.js";
import type { QrModule } from "./index.js";
import type { QrSettings } from "./settings.js";
import { moneyText } from "../money/money.js";

/**
 * The generic QR area in demo mode (loaded by `qrModule.demo`, never by production code): the national network's
 * simulator on the service's port, and the demo tenant's qr key.
 */
export const { part, seed }: AreaDemo<QrSettings, QrModule> = {
  part(deps, settings) {
    const network = createNetworkSimulator({
      // The token the area sends (NETWORK_API_TOKEN, or the simulator default its settings give).
      token: settings.token,
      clock: () => deps.clock.now(),
      // What the paid QR pays, read from the transaction it was issued as (the payee is its merchant's account).
      describe: (md5) => describeQr(deps.db, md5),
    });
    return {
      simulator: network,
      mount: (app) => mountSimulator(app, "/sim/network-api", network),
      controls: [
        { label: "Pay", path: "network/pay", fields: { md5: "md5" } },
        { label: "Decline", path: "network/fail", fields: { md5: "md5" } },
      ],
    };
  },
  seed: {
    label: "demo qr",
    keyField: "qr",
    idField: "qrKey",
    bannerLabel: "qr key (api-key)",
    simulator: { name: "network", url: (base) => `${base}/sim/network-api` },
    payHint: `/sim/network/pay {"md5"}`,
    tryIt: (base, key) => [
      `curl -s ${base}/qr/generate -H 'content-type: application/json' -H 'x-auth-type: api-key' \\`,
      `       -H 'x-api-key: ${key}' -d '{"amount":1.5,"currency":840,"expiredAfter":120000}'`,
    ],
  },
};

async function describeQr(
  db: Db,
  md5: string,
): Promise<{ toAccountId: string; amount: string; currency: string } | undefined> {
  const rows = await db.query<{ amount: string; currency: string; bakong_account_id: string }>(
    `select t.amount, t.currency, m.bakong_account_id from "transaction" t join merchant m on m.id = t.merchant_ref
     where t.upstream_ref = ? and t.area = 'qr' order by t.created_at desc limit 1`,
    [md5],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  return {
    toAccountId: row.bakong_account_id,
    amount: moneyText(row.amount, row.currency),
    currency: row.currency,
  };
}
