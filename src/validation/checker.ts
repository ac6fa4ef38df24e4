import type { FieldError } from "../errors.js";
import { invalidInput } from "./check.js";

/**
 * The imperative form of the rules, for inputs whose rules depend on the operation or on stored state
 * (the operator API's create-or-update inputs, where a field is required on create and optional on
 * update): collects field errors, then throws them all at once as the same BAD_USER_INPUT as the
 * decorated input classes (rules.ts).
 */
export class Checker {
  readonly errors: FieldError[] = [];

  fail(field: string, message: string): void {
    this.errors.push({ field, message });
  }

  text(
    field: string,
    value: unknown,
    opts: { required?: boolean; max: number; pattern?: RegExp; patternMessage?: string },
  ): string | null {
    if (value === undefined || value === null || value === "") {
      if (opts.required) this.fail(field, "is required");
      return null;
    }
    if (typeof value !== "string") {
      this.fail(field, "must be a string");
      return null;
    }
    if (value.length > opts.max) this.fail(field, `must be at most ${opts.max} characters`);
    else if (opts.pattern && !opts.pattern.test(value))
      this.fail(field, opts.patternMessage ?? "has an invalid format");
    return value;
  }

  done(message = "Invalid input"): void {
    if (this.errors.length > 0) throw invalidInput(this.errors, message);
  }
}
