import express, { type RequestHandler } from "express";
import type { Clock } from "../clock.js";
import type { Db } from "../db/sql.js";
import type { Logger } from "../logger.js";

/** Where the gateway's pushbacks arrive: `${PUSHBACK_PATH}/<gateway configuration id>`. */
export const PUSHBACK_PATH = "/gateway/pushback";
const MONITOR_JOB = "gateway.monitor";

/**
 * The gateway's pushback (`{tran_id, apv, status, return_params}`, unsigned) at the configuration's URL. It is
 * only a hint: the CHECKOUT transaction of that configuration's merchant with that order id is made due for a
 * check now and the monitor runs at once; only the gateway's own check API can change its status. The answer
 * is the same whatever the body names (nothing to learn from it), and a body that is not a pushback is 400.
 */
export function pushbackRouter(
  db: Db,
  enqueue: (name: string, data: Record<string, unknown>) => Promise<void>,
  logger: Logger,
  clock: Clock,
): RequestHandler[] {
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
      const rows = await db.query<{ id: string }>(
        `update "transaction" t set next_check_at = ?
         from gateway_config c, api_key k
         where c.id = ? and k.gateway_config_ref = c.id and t.api_key_ref = k.id
           and t.area = 'gateway' and t.status = 'CHECKOUT' and t.order_id = ?
         returning t.id`,
        [clock.now(), String(req.params.configId), tranId],
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
  return [express.json({ limit: "16kb" }), express.urlencoded({ extended: false, limit: "16kb" }), handle];
}
