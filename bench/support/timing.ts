import { percentile } from "../table.js";

/**
 * Wall-clock milliseconds with sub-millisecond precision. Comparable across processes on one machine:
 * each process anchors its monotonic clock to the system clock at start (performance.timeOrigin).
 */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface Spread {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function spread(xs: number[]): Spread {
  return {
    n: xs.length,
    p50: percentile(xs, 50),
    p95: percentile(xs, 95),
    p99: percentile(xs, 99),
    // Not Math.max(...xs): 10,000 subscribers give 600,000 samples, more arguments than the stack holds.
    max: xs.length ? xs.reduce((m, x) => (x > m ? x : m), -Infinity) : NaN,
  };
}

/** Milliseconds to one decimal, for table cells. */
export const ms1 = (v: number) => Math.round(v * 10) / 10;

/** The machine's state beside a figure: 1-minute load average before and after (the bench's own processes included). */
export function loadNote(before: number, after: number): string {
  return `Machine: 2 cores, 1-minute load average ${before.toFixed(1)} at the start, ${after.toFixed(1)} at the end (the bench's own processes count in it).`;
}
