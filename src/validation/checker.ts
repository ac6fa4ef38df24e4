import { AppError, type FieldError } from "../errors.js";
import { invalidInput } from "./check.js";
import { text, type Check, type TextOptions } from "./rules.js";

/**
 * A check's own top-level message, where the API documents one (`first must be 1 to 100`, `md5 must be 32 hex
 * characters`) instead of the listing `Invalid input: <field> <detail>`: the error names the first failure that says
 * one, with the same code and every detail.
 */
export interface CheckOptions {
  message?: string;
}

/**
 * The field rules of rules.ts applied by hand, for inputs whose rules depend on the operation or on stored state
 * (the operator API's create-or-update inputs, where a field is required on create and optional on update) and for
 * the scalar arguments of services and resolvers: collects field errors, then throws them all at once as the same
 * BAD_USER_INPUT as the decorated input classes. A rule that relates fields or asks stored state says its detail
 * through `fail`.
 */
export class Checker {
  readonly errors: FieldError[] = [];
  private own: string | undefined;

  fail(field: string, message: string, opts: CheckOptions = {}): void {
    this.errors.push({ field, message });
    this.own ??= opts.message;
  }

  /** Applies one rule (rules.ts) to one field; whether the value passed. */
  check(field: string, value: unknown, rule: Check<object>, opts: CheckOptions = {}): boolean {
    const message = rule(value, {});
    if (message !== null) this.fail(field, message, opts);
    return message === null;
  }

  /** The text rule (rules.ts `text`), "" as no value; the text when it is one (null when absent or not a string). */
  text(field: string, value: unknown, opts: Omit<TextOptions, "emptyIsAbsent">): string | null {
    this.check(field, value, text({ ...opts, emptyIsAbsent: true }));
    return typeof value === "string" && value !== "" ? value : null;
  }

  done(message = "Invalid input"): void {
    if (this.errors.length > 0) throw answer(this.errors, this.own, message);
  }
}

/** The one BAD_USER_INPUT: the top-level message said as it is (`own`), else the listing of check.ts. */
function answer(errors: FieldError[], own: string | undefined, message: string): AppError {
  return own === undefined ? invalidInput(errors, message) : new AppError("BAD_USER_INPUT", own, errors);
}

/**
 * One rule on one argument, answered at once when it fails (a service's scalar argument: the next check needs it
 * to have passed), with the argument's documented top-level message.
 */
export function checkArgument(field: string, value: unknown, rule: Check<object>, message: string): void {
  const c = new Checker();
  c.check(field, value, rule, { message });
  c.done();
}

/**
 * The error for a failure found outside a rule (a parse, a lookup of stored state), with its own message and what
 * the error adds beside its details (`extra`: a recheck's retryAfter).
 */
export function refuse(field: string, detail: string, message: string, extra: Record<string, unknown> = {}): AppError {
  return new AppError("BAD_USER_INPUT", message, [{ field, message: detail }], extra);
}
