// A recheck of a payment-link payment (docs/decisions/0192-recheck-payment.md): one status poll of the page's own API
// with the payment's stored, sealed poll session, read as the watch reads its polls (link-watch.ts), within the life
// of the QR the page issued (docs/decisions/0193-recheck-windows.md). The poll goes through the worker's gate, as the
// watch's own do: not sent while a 429 holds them back, and a 429 it meets holds them (decision 0190).

import type { SecretBox } from "../auth/secret-box.js";
import type { Clock } from "../clock.js";
import { decodeKhqr } from "../khqr/index.js";
import type { AreaRecheck, RecheckAnswer } from "../transactions/recheck.js";
import type { TxRecord } from "../transactions/record.js";
import type { TransitionRequest } from "../transactions/transition.js";
import { describeMismatch } from "../transactions/mismatch.js";
import type { LinkPollSession } from "./link-protocol.js";
import { approvalChange } from "./approval-check.js";
import { acceptableReceipt } from "./page-traffic.js";
import type { PollAnswer } from "./poll-client.js";
import { openPoll } from "./poll-store.js";
import type { PaywayStatus } from "./payway-protocol.js";

/** A link payment whose QR states no expiry (KHQR tag 99) is rechecked this long from its creation. */
export const LINK_QR_LIFE_MS = 30 * 24 * 3600_000;

/**
 * When the QR the page issued stops being payable: its own expiry (KHQR tag 99, sub 01, milliseconds), which real
 * PayWay QRs set 30 days after their creation; null when it states none.
 */
export function qrExpiry(qr: string | null): Date | null {
  if (qr === null) return null;
  const decoded = decodeKhqr(qr);
  const ms = decoded.status.code === 0 ? Number(decoded.data.expirationTimestamp ?? NaN) : NaN;
  return Number.isSafeInteger(ms) && ms > 0 ? new Date(ms) : null;
}

const fault = (error: string): RecheckAnswer => ({ outcome: { kind: "fault", error }, said: error });

export interface LinkRecheckDeps {
  box: Pick<SecretBox, "open">;
  /**
   * One direct status poll through this worker's gate (LinkWatch.pollOutOfTurn): the watch's HTTP client (its
   * sockets, proxy and answer cap), its 429 pause and LINK_POLL_RATE.
   */
  poll(session: LinkPollSession): Promise<PollAnswer>;
  clock: Clock;
}

export function linkRecheck(deps: LinkRecheckDeps): AreaRecheck {
  return {
    window(tx) {
      if (tx.upstream.poll === undefined)
        return {
          cannot:
            "it has no stored status call to ask without its page (a payment of the retired simulated page); " +
            "only a PayWay link payment is rechecked",
        };
      const expiry = qrExpiry(tx.qr);
      if (expiry !== null) return { endsAt: expiry, rule: "the life of the QR the page issued (its KHQR tag 99)" };
      return {
        endsAt: new Date(tx.createdAt.getTime() + LINK_QR_LIFE_MS),
        rule: "its QR states no expiry: 30 days from its creation, as PayWay's QRs live",
      };
    },
    async ask(tx) {
      let session: LinkPollSession | null;
      try {
        session = openPoll(deps.box, tx);
      } catch (err) {
        return fault(`its stored poll session does not open (SECRET_KEY changed?): ${(err as Error).message}`);
      }
      if (session === null) return fault("it has no stored poll session");
      const answer = await deps.poll(session);
      if (answer.kind === "refused") return fault(`PayWay refused the status poll: ${answer.detail}`);
      if (answer.kind === "fault") return fault(`PayWay did not answer the status poll: ${answer.detail}`);
      return statusAnswer(deps, tx, session, answer.status);
    },
  };
}

/** What a status the page's API reported means, as the watch records it (link-watch.ts). */
function statusAnswer(deps: LinkRecheckDeps, tx: TxRecord, session: LinkPollSession, s: PaywayStatus): RecheckAnswer {
  const now = deps.clock.now();
  const reported = `PayWay reports "${s.action}"${s.message === null ? "" : `: ${s.message}`}`;
  if (s.action === "approved") {
    const linkUrl = typeof tx.upstream.linkUrl === "string" ? tx.upstream.linkUrl : session.origin;
    // PayWay's receipt is on its API's origin; a receipt anywhere else is dropped, the approval still recorded.
    const receiptUrl =
      s.receiptUrl === null ? null : acceptableReceipt(s.receiptUrl, new URL(linkUrl).origin, [session.apiOrigin]);
    const approved: TransitionRequest = {
      id: tx.id,
      to: "SUCCESS",
      event: "payment.completed",
      upstream: { approvedAt: now.toISOString(), ...(receiptUrl === null ? {} : { receiptUrl }) },
    };
    // SUCCESS only when the QR paid is what was asked; else held (approval-check.ts). PayWay states no paid figures.
    const { id: _id, ...change } = approvalChange(tx, approved, now);
    const said = change.mismatch === undefined ? reported : `${reported}, but ${describeMismatch(change.mismatch)}`;
    return { outcome: { kind: "transition", change }, said };
  }
  if (s.declined) {
    const failure = { message: `PayWay reported "${s.action}"${s.message === null ? "" : `: ${s.message}`}` };
    return {
      outcome: { kind: "transition", change: { to: "FAILED", event: "payment.failed", upstream: { failure } } },
      said: reported,
    };
  }
  // Scanned is a visible change of a waiting payment (an expired one takes only a payment).
  const scanned = s.action === "scanned" || s.action === "processing-payment";
  if (tx.status !== "EXPIRED" && tx.upstream.scannedAt === undefined && scanned)
    return {
      outcome: { kind: "transition", change: { event: "payment.scanned", upstream: { scannedAt: now.toISOString() } } },
      said: `${reported} (not paid yet)`,
    };
  return { outcome: { kind: "unchanged" }, said: `${reported} (not paid)` };
}
