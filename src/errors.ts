export type ErrorCode =
  | "BAD_USER_INPUT"
  | "UNAUTHENTICATED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "CONFLICT"
  | "UPSTREAM_REJECTED"
  | "UPSTREAM_UNAVAILABLE"
  | "RATE_LIMITED"
  | "IDEMPOTENCY_CONFLICT"
  | "NOT_IMPLEMENTED"
  | "METHOD_NOT_ALLOWED"
  | "SERVICE_UNAVAILABLE"
  | "INTERNAL";
export interface FieldError {
  field: string;
  message: string;
}
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: FieldError[] = [],
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "AppError";
  }
}

/**
 * The process cannot start (port taken, database unreachable, data directory unwritable). commands.ts prints
 * its message as one line and exits non-zero: the message says what is wrong and which setting fixes it.
 */
export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StartupError";
  }
}
