import { AppError } from "../errors.js";

/**
 * Whether the database is doing the work it is given, for /readyz
 * (docs/decisions/0091-readiness-tells-the-truth.md). "Can connect" was not enough: the embedded database once
 * answered `select 1` while every generate and every monitor transition failed with a prepared-statement error.
 *
 * Every statement of the SQL edge reports its outcome here. A failure counts when it says the database or
 * our use of it is broken (the server refused, the session is in a bad state, a statement no longer
 * prepares), never when it is about the request's own data: SQLSTATE classes 22 (data exception) and 23
 * (integrity constraint, e.g. a duplicate orderId), a serialization conflict (40001) and a cancelled
 * statement (57014, a client timeout) are answers, not outages.
 */
const INPUT_CLASSES = new Set(["22", "23"]);
const ANSWERS = new Set(["40001", "40P01", "57014"]);

export interface HealthVerdict {
  ok: boolean;
  windowMs: number;
  statements: number;
  failed: number;
  lastError: string | null;
}

export interface StatementHealthOptions {
  windowMs?: number;
  /** Not ready when at least this many counted failures fall in the window… */
  minFailures?: number;
  /** …and they are at least this share of the window's statements. */
  minShare?: number;
  now?: () => number;
}

/** Counts per second over a sliding window: constant memory whatever the traffic. */
export class StatementHealth {
  private readonly windowMs: number;
  private readonly minFailures: number;
  private readonly minShare: number;
  private readonly now: () => number;
  private readonly buckets: { second: number; ok: number; failed: number }[] = [];
  private lastError: string | null = null;

  constructor(opts: StatementHealthOptions = {}) {
    this.windowMs = opts.windowMs ?? 30_000;
    this.minFailures = opts.minFailures ?? 5;
    this.minShare = opts.minShare ?? 0.2;
    this.now = opts.now ?? Date.now;
  }

  succeeded(): void {
    this.bucket().ok++;
  }

  /** Records a failed statement; returns whether it counted against readiness. */
  failed(err: unknown): boolean {
    if (!countsAgainstReadiness(err)) {
      this.bucket().ok++;
      return false;
    }
    this.bucket().failed++;
    // Only the SQLSTATE (or the error's class) leaves the process: /readyz is not the place for messages.
    const code = (err as { code?: unknown } | null)?.code;
    this.lastError = typeof code === "string" ? `SQLSTATE ${code}` : err instanceof Error ? err.name : "unknown error";
    return true;
  }

  verdict(): HealthVerdict {
    this.trim();
    let statements = 0;
    let failed = 0;
    for (const b of this.buckets) {
      statements += b.ok + b.failed;
      failed += b.failed;
    }
    const ok = failed < this.minFailures || failed / statements < this.minShare;
    return { ok, windowMs: this.windowMs, statements, failed, lastError: failed > 0 ? this.lastError : null };
  }

  private bucket(): { second: number; ok: number; failed: number } {
    const second = Math.floor(this.now() / 1000);
    const last = this.buckets.at(-1);
    if (last?.second === second) return last;
    const b = { second, ok: 0, failed: 0 };
    this.buckets.push(b);
    this.trim();
    return b;
  }

  private trim(): void {
    const oldest = Math.floor((this.now() - this.windowMs) / 1000);
    while (this.buckets.length > 0 && (this.buckets[0] as { second: number }).second <= oldest) this.buckets.shift();
  }
}

export function countsAgainstReadiness(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !/^[0-9A-Z]{5}$/.test(code)) {
    // No SQLSTATE: our own refusals (NUL in a parameter) are input; driver and socket errors are not.
    return !(err instanceof AppError);
  }
  return !INPUT_CLASSES.has(code.slice(0, 2)) && !ANSWERS.has(code);
}
