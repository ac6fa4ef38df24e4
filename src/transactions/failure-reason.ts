import type { TxRecord } from "./record.js";

/**
 * Why a FAILED transaction failed, as stored with its failure (`upstream.failure.message`: the page's refusal, the
 * network error, a decline, monitoring that kept failing, an operator's decision); null for every other status.
 */
export function failureReason(tx: Pick<TxRecord, "status" | "upstream">): string | null {
  if (tx.status !== "FAILED") return null;
  const failure = tx.upstream.failure;
  if (typeof failure !== "object" || failure === null || Array.isArray(failure)) return null;
  const message = (failure as Record<string, unknown>).message;
  return typeof message === "string" && message.length > 0 ? message : null;
}
