import type { AdminService } from "../admin/admin-service.js";
import type { AreaRecheck, RecheckAnswer } from "../transactions/recheck.js";
import type { GatewayClient } from "./upstream-client.js";
import type { GatewayConfigs } from "./gateway-configs.js";
import { askGateway, CHECK_WINDOW_MS, DETAIL_PER_MINUTE, type GatewayLimits } from "./gateway-monitor.job.js";

/**
 * How long after its expiry a hosted-gateway payment may still be rechecked, at the least
 * (docs/decisions/0193-recheck-windows.md): a day, the other areas' default late watch. The area has no late watch of
 * its own (its expiry is hard), so an approval the gateway gives as the QR's lifetime ends is found only by a recheck.
 */
export const GATEWAY_RECHECK_AFTER_EXPIRY_MS = 24 * 3600_000;

const fault = (error: string): RecheckAnswer => ({ outcome: { kind: "fault", error }, said: error });

/**
 * A recheck of a hosted-gateway payment: the monitor's own check (askGateway) with the credentials of the key's
 * configuration — check-transaction-2 within the 7 days it answers for, transaction-detail after them, taking a turn
 * of the merchant's 10 a minute that the monitor shares (never more than the gateway allows), and not while a 429
 * pauses the merchant.
 */
export function gatewayRecheck(deps: {
  admin: Pick<AdminService, "apiKey">;
  configs: Pick<GatewayConfigs, "credentialsOf">;
  client: GatewayClient;
  limits: GatewayLimits;
  now: () => number;
}): AreaRecheck {
  const { admin, configs, limits, now } = deps;
  return {
    window(tx) {
      const checkable = tx.createdAt.getTime() + CHECK_WINDOW_MS;
      const afterExpiry = tx.expiresAt.getTime() + GATEWAY_RECHECK_AFTER_EXPIRY_MS;
      return {
        endsAt: new Date(Math.max(checkable, afterExpiry)),
        rule:
          "a hosted-gateway payment is rechecked for 7 days from its creation (check-transaction-2's window), " +
          "and at least a day past its expiry",
      };
    },
    async ask(tx) {
      const configId = (await admin.apiKey(tx.apiKeyRef))?.targetRef ?? null;
      const cred = configId === null ? null : await configs.credentialsOf(configId);
      if (cred === null) return fault("the key has no gateway configuration");
      if (limits.paused(cred.merchantId))
        return fault("the gateway answered 429 (too many attempts) for this merchant: its checks pause for a minute");
      const old = now() - tx.createdAt.getTime() > CHECK_WINDOW_MS;
      if (old && !limits.takeDetail(cred.merchantId))
        return fault(
          `the gateway's transaction-detail allows ${DETAIL_PER_MINUTE} calls a minute for this merchant and they ` +
            "are used: ask again in a minute",
        );
      return askGateway({ client: deps.client, limits, now }, tx, cred, old);
    },
  };
}
