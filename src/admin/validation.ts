import { AppError, type FieldError } from "../errors.js";

/** Collects field errors, then throws them all at once as one BAD_USER_INPUT. */
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
    if (this.errors.length > 0)
      throw new AppError(
        "BAD_USER_INPUT",
        `${message}: ${this.errors.map((e) => `${e.field} ${e.message}`).join("; ")}`,
        this.errors,
      );
  }
}

export function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}
