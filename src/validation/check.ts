import { validateSync, type ValidationError } from "class-validator";
import { AppError, type FieldError } from "../errors.js";
import { exactDecimal } from "../money/money.js";

/** The details of class-validator's errors, named by path (`qrData.items.0.name`), nested ones first. */
function details(errors: ValidationError[], prefix: string, out: FieldError[]): FieldError[] {
  for (const e of errors) {
    const field = `${prefix}${e.property}`;
    details(e.children ?? [], `${field}.`, out);
    for (const message of Object.values(e.constraints ?? {})) out.push({ field, message });
  }
  return out;
}

/** The one error an invalid input answers with (REST and GraphQL alike): 400 BAD_USER_INPUT, every detail. */
export function invalidInput(errors: FieldError[], message = "Invalid request"): AppError {
  return new AppError(
    "BAD_USER_INPUT",
    `${message}: ${errors.map((e) => `${e.field} ${e.message}`).join("; ")}`,
    errors,
  );
}

/** Checks an input object against the rules on its class; throws `invalidInput` when any fails. */
export function checkInput(input: object, prefix = ""): void {
  const errors = validateSync(input, { forbidUnknownValues: false });
  if (errors.length > 0) throw invalidInput(details(errors, prefix, []));
}

/**
 * type-graphql's `validateFn`: every argument that is an input object (an instance of its class, which
 * type-graphql builds from variables and REST bodies alike) is checked before the resolver runs. Detail
 * paths are relative to the argument (`amount`, `qrData.orderId`), as REST bodies are.
 */
export function validateArgument(value: unknown): void {
  if (value !== null && typeof value === "object" && !Array.isArray(value) && value.constructor !== Object)
    checkInput(value);
}

/** An amount its rule has checked, as exact decimal text (checked again: a service may be called directly). */
export function decimalInput(n: number, field: string, maxDecimals: number): string {
  const d = exactDecimal(n, maxDecimals);
  if ("error" in d) throw invalidInput([{ field, message: d.error }]);
  return d.value;
}
