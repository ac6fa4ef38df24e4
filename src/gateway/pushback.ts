import express, { type Request, type RequestHandler } from "express";
import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import type { Logger } from "../logger.js";
import type { RateLimiter } from "../auth/rate-limit.js";
import { addressKey } from "../rest/connection-caps.js";
import { sendError } from "../rest/shim.js";
import { heldSql } from "../transactions/mismatch.js";
import type { GatewayConfigs } from "./gateway-configs.js";

/** Where the gateway's pushbacks arrive: `${PUSHBACK_PATH}/<gateway configuration id>`. */
export const PUSHBACK_PATH = "/gateway/pushback";
const MONITOR_JOB = "gateway.monitor";
/** What a configuration id can look like; anything else names none, without asking the database. */
const CONFIG_ID = /^[A-Za-z0-9_-]{1,64}$/;

export interface PushbackDeps {
  db: Db;
  configs: Pick<GatewayConfigs, "exists">;
  enqueue: (name: string, data: Record<string, unknown>) => Promise<void>;
  logger: Logger;
  clock: Clock;
  /** Buckets per client address and per configuration (RATE_LIMIT_PER_MINUTE); null: not limited. */
  limiter: RateLimiter | null;
  /** Who a request comes from (src/auth/client-address.ts). */
  addressOf: (req: Request) => string;
}

/**
 * The pushback is unauthenticated, so it is limited before anything else: first per client address (a flood from
 * one address is refused before it drains a configuration's bucket), then per configuration named in the path,
 * whether or not it exists (a 429 says nothing about which ids exist).
 */
function pushbackLimit(limiter: RateLimiter, addressOf: PushbackDeps["addressOf"]): RequestHandler {
  return (req, res, next) => {
    const address = addressKey(addressOf(req));
    const wait =
      limiter.take(`pushback-address:${address}`) || limiter.take(`pushback-config:${String(req.params.configId)}`);
    if (wait === 0) return next();
    res.setHeader("retry-after", String(wait));
    sendError(
      res,
      429,
      "RATE_LIMITED",
      `Too many pushbacks from this address or for this configuration; retry in ${wait} s`,
    );
  };
}

/**
 * The gateway's pushback (`{tran_id, apv, status, return_params}`, unsigned) at the configuration's URL. It is
 * only a hint: the CHECKOUT transaction of that configuration's merchant with that order id is made due for a
 * check now and the monitor runs at once; only the gateway's own check API can change its status. The answer
 * is the same whatever the body names (nothing to learn from it), and a body that is not a pushback is 400.
 * A configuration that does not exist costs one cached lookup and no update.
 */
export function pushbackRouter(deps: PushbackDeps): RequestHandler[] {
  const { db, configs, enqueue, logger, clock } = deps;
  const handle: RequestHandler = async (req, res, next) => {
    try {
      const body: unknown = req.body;
      const tranId = typeof body === "object" && body !== null ? (body as Record<string, unknown>).tran_id : undefined;
      if (typeof tranId !== "string" || tranId.length < 1 || tranId.length > 20) {
        res.status(400).json({
          error: {
            code: "BAD_USER_INPUT",
            message: "not a gateway pushback",
            details: [{ field: "tran_id", message: "must be 1 to 20 characters" }],
          },
        });
        return;
      }
      const configId = String(req.params.configId);
      if (!CONFIG_ID.test(configId) || !(await configs.exists(configId))) return void res.json({ received: true });
      const rows = await db.query<{ id: string }>(
        `update "transaction" t set next_check_at = ?
         from gateway_config c, api_key k
         where c.id = ? and k.target_ref = c.id and t.api_key_ref = k.id
           and t.area = 'gateway' and t.status = 'CHECKOUT' and t.upstream_ref = ? and not ${heldSql("t")}
         returning t.id`,
        [clock.now(), configId, tranId],
      );
      if (rows.length > 0) {
        await enqueue(MONITOR_JOB, {});
        logger.info({ transactionId: rows[0].id }, "gateway pushback: checking the transaction now");
      }
      res.json({ received: true });
    } catch (err) {
      next(err);
    }
  };
  return [
    ...(deps.limiter === null ? [] : [pushbackLimit(deps.limiter, deps.addressOf)]),
    express.json({ limit: "16kb" }),
    express.urlencoded({ extended: false, limit: "16kb" }),
    handle,
  ];
}
