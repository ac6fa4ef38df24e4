/**
 * Delay before retry n (1-based): exponential from 5 s, capped at 1 h, with ±20 % jitter so a recovering
 * receiver is not hit by every retry at once. Over 24 h that is about 30 attempts.
 */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(5_000 * 2 ** Math.max(0, attempt - 1), 3_600_000);
  return Math.round(base * (0.8 + 0.4 * random()));
}
