// What the PayWay watch tests (test/gateway-link/payway-*.test.ts) do to the twin and read of the service, written
// once: set a fault mode, generate through the service, find the twin's client of a payment, wait for its polls, and
// read the payment's row as the watch leaves it.

import { expect } from "@jest/globals";
import type { Db } from "../../src/db/sql.js";
import { AUTH, post } from "./app.js";
import type { RunningTwin } from "./payway-twin.js";
import { waitFor } from "./wait.js";

/** The generate answer, as far as these tests read it. */
export interface LinkTx {
  transactionId: string;
  expiredAt: string;
  status: string;
  data: { clientId: string };
}

/** Sets the twin's fault mode (`{mode: "ok"}` ends it); the twin must accept it. */
export async function twinFault(twin: RunningTwin, body: Record<string, unknown>): Promise<void> {
  expect((await twin.post("/sim/payway/fault", body)).status).toBe(200);
}

/** A generate through the service with a gateway-link key (KHR); anything but 200 throws with the answer. */
export async function generateLinkQr(url: string, key: string, amount: number): Promise<LinkTx> {
  const res = await post(`${url}/gateway-link/generate-qr`, { amount, currency: 116 }, AUTH.gatewayLink(key));
  if (res.status !== 200) throw new Error(`generate: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as LinkTx;
}

/** The twin's client of a payment (its polls, device ids, action). */
export function twinClient(twin: RunningTwin, b: Pick<LinkTx, "data">) {
  const c = twin.twin.store.client(b.data.clientId);
  if (c === undefined) throw new Error("the twin does not know this client");
  return c;
}

/**
 * Moves the service's clock with `jump` at a moment when no status poll is on its way, and returns the twin's count
 * of the payment's polls at that moment. A poll the twin has counted but whose answer the watch has not read yet is
 * followed by a step computed on the new time: seen under load, a late payment's poll counted before a jump of hours
 * came back after it, the payment was parked minutes ahead by the new time, and "one poll more than before the jump"
 * never came. Once the watch has read an answer, its next step is taken in the same turn of the event loop (the test
 * and the service share it), so no poll in flight means none half-handled.
 */
export async function jumpBetweenPolls(
  watch: { stats(): { inFlight: number } },
  twin: RunningTwin,
  b: Pick<LinkTx, "data">,
  jump: () => void,
): Promise<number> {
  await waitFor(() => watch.stats().inFlight === 0, 20_000, 10, "no poll on its way");
  const polls = twinClient(twin, b).polls;
  jump();
  return polls;
}

/** Waits until the twin has answered `count` polls of this payment in all. */
export function polled(twin: RunningTwin, b: Pick<LinkTx, "data">, count: number): Promise<unknown> {
  // 45 s: after a jump of the clock every parked payment of the file comes due at once, and on a 2-core machine
  // running four test files a poll once took more than 20 s to go out (the poll still came; nothing was lost).
  return waitFor(() => twinClient(twin, b).polls >= count, 45_000, 50, `${count} polls`);
}

/** The payment's row as the watch leaves it: status, next check and completion (ms, or null). */
export async function txRow(
  db: Db,
  id: string,
): Promise<{ status: string; nextCheckAt: number | null; completedAt: number | null }> {
  const [r] = await db.query<{ status: string; next_check_at: unknown; completed_at: unknown }>(
    `select status, next_check_at, completed_at from "transaction" where id = ?`,
    [id],
  );
  const ms = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string | Date).getTime());
  return { status: r.status, nextCheckAt: ms(r.next_check_at), completedAt: ms(r.completed_at) };
}

/** One kind of refusal in `/readyz` `details.gatewayLink.refusals` (link-refusals.ts). */
export interface RefusalCount {
  count: number;
  cause?: string;
  last: { where: string; detail: string } | null;
}

/** `/readyz` `details.gatewayLink`, as far as the tests read it. */
export interface LinkReadiness {
  refused?: string;
  likelyCause?: string;
  setting?: string;
  refusals: { cloudflareChallenge: RefusalCount; cloudflareBlock: RefusalCount; pageRefusedData: RefusalCount };
}
