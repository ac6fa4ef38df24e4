import type { AdminService } from "../admin/admin-service.js";
import type { JobSpec } from "../jobs/scheduler.js";
import type { TxRecord } from "../transactions/record.js";
import { monitorJob, type CheckOutcome, type MonitorDeps, type MonitorPort } from "../transactions/monitor.js";
import type { GatewayClient } from "./upstream-client.js";
import type { GatewayConfigs } from "./gateway-configs.js";
import type { TransitionRequest } from "../transactions/transition.js";

/**
 * The upstream payment status → our status (docs/decisions.md "Gateway status mapping").
 * Anything else (PENDING, NOT_FOUND, unknown) leaves the transaction in CHECKOUT until its expiry.
 */
export function mapGatewayStatus(paymentStatus: string): Pick<TransitionRequest, "to" | "event"> | null {
  switch (paymentStatus) {
    case "APPROVED":
    case "PRE-AUTH":
      return { to: "SUCCESS", event: "payment.completed" };
    case "DECLINED":
    case "CANCELLED":
    case "REFUNDED":
      return { to: "FAILED", event: "payment.failed" };
    default:
      return null;
  }
}

/**
 * The gateway's check-transaction API as the monitor loop sees it: one call per transaction, with the
 * credentials of the configuration its key is linked to. A final status → SUCCESS or FAILED; a non-final
 * status that changed (e.g. the gateway starts reporting PENDING) → transaction.updated.
 */
export function gatewayMonitorPort(
  admin: Pick<AdminService, "apiKey">,
  configs: Pick<GatewayConfigs, "credentialsOf">,
  client: GatewayClient,
): MonitorPort {
  return {
    async check(txs) {
      const creds = new Map<string, Promise<{ merchantId: string; apiKey: string } | null>>();
      const credentialsOf = async (tx: TxRecord) => {
        const cfg = (await admin.apiKey(tx.apiKeyRef))?.gatewayConfigRef ?? null;
        if (cfg === null) return null;
        if (!creds.has(cfg)) creds.set(cfg, configs.credentialsOf(cfg));
        return creds.get(cfg) ?? null;
      };
      const answers = await Promise.all(
        txs.map(async (tx): Promise<[string, CheckOutcome]> => {
          try {
            const cred = await credentialsOf(tx);
            if (!cred) return [tx.id, { kind: "fault", error: "the key has no gateway configuration" }];
            const r = await client.checkTransaction(cred, tx.orderId as string);
            const mapped = mapGatewayStatus(r.paymentStatus);
            const upstream = {
              gatewayStatus: { code: r.statusCode, message: r.message },
              paymentStatus: r.paymentStatus,
            };
            if (mapped) return [tx.id, { kind: "transition", change: { ...mapped, upstream } }];
            if (r.paymentStatus !== tx.upstream.paymentStatus)
              return [tx.id, { kind: "transition", change: { event: "transaction.updated", upstream } }];
            return [tx.id, { kind: "unchanged" }];
          } catch (err) {
            return [tx.id, { kind: "fault", error: (err as Error).message }];
          }
        }),
      );
      return new Map(answers);
    },
  };
}

export interface GatewayMonitorDeps extends MonitorDeps {
  admin: Pick<AdminService, "apiKey">;
  configs: Pick<GatewayConfigs, "credentialsOf">;
  intervalMs: number;
}

/** Polls CHECKOUT gateway transactions until final or expired (transactions/monitor.ts); faults back off. */
export function gatewayMonitorJob(deps: GatewayMonitorDeps, client: GatewayClient): JobSpec {
  return monitorJob(deps, {
    name: "gateway.monitor",
    area: "gateway",
    recheckMs: deps.intervalMs,
    batch: 200,
    port: gatewayMonitorPort(deps.admin, deps.configs, client),
  });
}
