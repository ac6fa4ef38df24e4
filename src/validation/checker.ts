import type { FieldError } from "../errors.js";
import { invalidInput } from "./check.js";
import { text, type Check, type TextOptions } from "./rules.js";

/**
 * The field rules of rules.ts applied by hand, for inputs whose rules depend on the operation or on stored state
 * (the operator API's create-or-update inputs, where a field is required on create and optional on update): collects
 * field errors, then throws them all at once as the same BAD_USER_INPUT as the decorated input classes. A rule that
 * relates fields or asks stored state says its message through `fail`.
 */
export class Checker {
  readonly errors: FieldError[] = [];

  fail(field: string, message: string): void {
    this.errors.push({ field, message });
  }

  /** Applies one rule (rules.ts) to one field; whether the value passed. */
  check(field: string, value: unknown, rule: Check<object>): boolean {
    const message = rule(value, {});
    if (message !== null) this.fail(field, message);
    return message === null;
  }

  /** The text rule (rules.ts `text`), "" as no value; the text when it is one (null when absent or not a string). */
  text(field: string, value: unknown, opts: Omit<TextOptions, "emptyIsAbsent">): string | null {
    this.check(field, value, text({ ...opts, emptyIsAbsent: true }));
    return typeof value === "string" && value !== "" ? value : null;
  }

  done(message = "Invalid input"): void {
    if (this.errors.length > 0) throw invalidInput(this.errors, message);
  }
}
