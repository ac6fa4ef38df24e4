import type { ErrorRequestHandler, Express, RequestHandler, Response, Router } from "express";
import type { ErrorCode, FieldError } from "../errors.js";

/** Helpers shared by the simulators' control routes (our own API style, not an upstream's). */

const HTTP_STATUS: Partial<Record<ErrorCode, number>> = {
  BAD_USER_INPUT: 400,
  NOT_FOUND: 404,
  CONFLICT: 409,
};

export function sendControlError(res: Response, code: ErrorCode, message: string, details: FieldError[] = []): void {
  res.status(HTTP_STATUS[code] ?? 500).json({ error: { code, message, details } });
}

/** Malformed JSON (or any other body-parser failure) on a control route → our error body. */
export const controlBodyErrors: ErrorRequestHandler = (err: unknown, _req, res, next) => {
  if (res.headersSent) return next(err);
  const status = typeof err === "object" && err !== null && "status" in err ? Number(err.status) : 500;
  if (status >= 400 && status < 500) {
    sendControlError(res, "BAD_USER_INPUT", "request body must be valid JSON (at most 64 KiB)");
    return;
  }
  sendControlError(res, "INTERNAL", "simulator error");
};

/** Reads the JSON object of a control request; anything else yields an empty record plus an error. */
export function bodyRecord(body: unknown, details: FieldError[]): Record<string, unknown> {
  if (typeof body === "object" && body !== null && !Array.isArray(body)) return body as Record<string, unknown>;
  details.push({ field: "body", message: "must be a JSON object" });
  return {};
}

export function requireString(
  body: Record<string, unknown>,
  field: string,
  details: FieldError[],
  rule?: { pattern: RegExp; message: string },
): string {
  const value = body[field];
  if (typeof value !== "string" || value.length === 0) {
    details.push({ field, message: "is required and must be a non-empty string" });
    return "";
  }
  if (rule && !rule.pattern.test(value)) details.push({ field, message: rule.message });
  return value;
}

export function optionalString(
  body: Record<string, unknown>,
  field: string,
  details: FieldError[],
): string | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length === 0) {
    details.push({ field, message: "must be a non-empty string when given" });
    return undefined;
  }
  return value;
}

export function requireOneOf<T extends string>(
  body: Record<string, unknown>,
  field: string,
  allowed: readonly T[],
  details: FieldError[],
): T {
  const value = body[field];
  if (typeof value === "string" && (allowed as readonly string[]).includes(value)) return value as T;
  details.push({ field, message: `must be one of ${allowed.join(", ")}` });
  return allowed[0];
}

/** Optional whole number of milliseconds (fault delays). */
export function optionalMs(
  body: Record<string, unknown>,
  field: string,
  details: FieldError[],
  max = 600_000,
): number | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > max) {
    details.push({ field, message: `must be a whole number of milliseconds from 0 to ${max}` });
    return undefined;
  }
  return value;
}

export function sleep(ms: number): Promise<void> {
  // unref: a delayed answer must not keep a finished test run or a closing process alive
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

export interface FaultState<M extends string> {
  mode: M;
  slowMs: number;
  variant: "text" | "json";
}

/** `POST <path> {mode, slowMs?, variant?}`: the fault-injection control every simulator shares. */
export function faultControl<M extends string>(modes: readonly M[], state: { fault: FaultState<M> }): RequestHandler {
  return (req, res) => {
    const details: FieldError[] = [];
    const body = bodyRecord(req.body, details);
    const mode = requireOneOf(body, "mode", modes, details);
    const slowMs = optionalMs(body, "slowMs", details);
    const variant =
      body.variant === undefined ? "text" : requireOneOf(body, "variant", ["text", "json"] as const, details);
    if (details.length > 0) return sendControlError(res, "BAD_USER_INPUT", "invalid fault request", details);
    state.fault = { mode, slowMs: slowMs ?? state.fault.slowMs, variant };
    res.json(state.fault);
  };
}

/** Mounts a simulated upstream on the app: its API under `path`, its `/sim/…` controls at the root. */
export function mountSimulator(app: Express, path: string, simulator: { api: Router; controls: Router }): void {
  app.use(path, simulator.api);
  app.use(simulator.controls);
}
