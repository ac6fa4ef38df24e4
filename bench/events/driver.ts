// A forked helper that commits transitions with the project's own TransactionStore on the bench database:
// the same code path the monitor jobs use (conditional update + outbox row + webhook delivery rows +
// pg_notify, one database transaction). It records, per event, when the transition started and when its
// commit was acknowledged (wall clock, sub-ms).
import "reflect-metadata";
import { systemClock } from "../../src/clock.js";
import { ENTITIES } from "../../src/app.js";
import { createOrm, type Orm } from "../../src/db/orm.js";
import { Db } from "../../src/db/sql.js";
import { newId } from "../../src/ids.js";
import { EventBus } from "../../src/events/event-bus.js";
import type { EventType } from "../../src/transactions/transaction-event.entity.js";
import type { TxStatus } from "../../src/transactions/transaction.entity.js";
import { TransactionStore } from "../../src/transactions/transition.js";
import { serveRequests, type Request } from "../support/ipc.js";
import { sleep, wallNow } from "../support/timing.js";
import { WEBHOOK_OUTBOX } from "../../src/webhooks/index.js";

/** One committed transition: [eventId, transactionId, startedAt, committedAt]. */
export type Commit = [string, string, number, number];

export interface Step {
  event: EventType;
  to?: TxStatus;
}

let orm: Orm | null = null;
let store: TransactionStore | null = null;
let seq = 0;

function theStore(): TransactionStore {
  if (store === null) throw new Error("init first");
  return store;
}

async function commit(txId: string, step: Step): Promise<Commit> {
  const startedAt = wallNow();
  const r = await theStore().transition({ id: txId, event: step.event, to: step.to, upstream: { bench: ++seq } });
  const committedAt = wallNow();
  if (!r.won || r.event === null) throw new Error(`transition of ${txId} did not win (status ${r.tx.status})`);
  return [r.event.id, txId, startedAt, committedAt];
}

/** Open loop: transition i starts at t0 + i/rate whether or not earlier ones have finished. */
async function atRate(
  ids: string[],
  rate: number,
  total: number,
  step: Step,
): Promise<{ commits: Commit[]; elapsedMs: number }> {
  const commits: Commit[] = [];
  const inFlight: Promise<void>[] = [];
  const t0 = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait > 0.5) await sleep(wait);
    inFlight.push(commit(ids[i % ids.length], step).then((c) => void commits.push(c)));
  }
  await Promise.all(inFlight);
  return { commits, elapsedMs: performance.now() - t0 };
}

/** As fast as `concurrency` allows: set-up and warm-up, not measured. */
async function burst(ids: string[], step: Step, concurrency: number): Promise<Commit[]> {
  const out: Commit[] = [];
  let next = 0;
  const lane = async () => {
    while (next < ids.length) out.push(await commit(ids[next++], step));
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return out;
}

serveRequests(
  {
    async init(req: Request) {
      orm = await createOrm(req.dbUrl as string, (req.poolSize as number | undefined) ?? 4, ENTITIES);
      store = new TransactionStore(new Db(orm), new EventBus(), systemClock, WEBHOOK_OUTBOX);
      return true;
    },
    /** Issues `count` PENDING generic-QR transactions for one key (payment.created events); returns their ids. */
    async create(req: Request) {
      const ids: string[] = [];
      const now = Date.now();
      for (let i = 0; i < (req.count as number); i++) {
        const { tx } = await theStore().create({
          id: newId("txn"),
          area: "qr",
          merchantRef: req.merchantRef as string,
          apiKeyRef: req.apiKeyRef as string,
          status: "PENDING",
          amount: "1.00",
          currency: "USD",
          meta: { bench: i },
          expiresAt: new Date(now + 3600_000),
        });
        ids.push(tx.id);
      }
      return ids;
    },
    burst: (req: Request) => burst(req.ids as string[], req.step as Step, (req.concurrency as number | undefined) ?? 8),
    run: (req: Request) => atRate(req.ids as string[], req.rate as number, req.total as number, req.step as Step),
  },
  async () => {
    await orm?.close();
  },
);
