// Our configuration reader (src/config.ts: EnvReader and the rules under loadConfig) beside zod 4 and envalid 8
// reading the same variables. zod is written to give our messages (its `error` functions, z.stringbool, z.enum);
// envalid as it is meant to be used (num, bool, str with choices, url). Behaviour: what each answers to the same
// values, against ours. Speed: one read of the variables below per op, median ops/s of 5 CPU-timed runs
// (bench/codec.ts `compare`). docs/decisions/0229-configuration-reader-stays-ours.md reads the figures.
// `npm run bench -- --only=zod`
import { bool as envBool, cleanEnv, num, str as envStr, url as envUrl, type ValidatorSpec } from "envalid";
import { z } from "zod";
import { ConfigError, EnvReader } from "../src/config.js";
import { compare } from "./codec.js";
import { importMs } from "./support/import-cost.js";
import type { Section } from "./table.js";

type Env = Record<string, string | undefined>;
type Spec =
  | { name: string; kind: "int"; dflt: number; min: number; max: number }
  | { name: string; kind: "bool"; dflt: boolean }
  | { name: string; kind: "oneOf"; allowed: string[]; dflt: string }
  | { name: string; kind: "url"; protocols: string[] };

const int = (name: string, dflt: number, min: number, max: number): Spec => ({ name, kind: "int", dflt, min, max });
const bool = (name: string, dflt: boolean): Spec => ({ name, kind: "bool", dflt });

/** The kinds of variable loadConfig and the areas read, as many as loadConfig reads of each. */
const SPECS: Spec[] = [
  { name: "NODE_ENV", kind: "oneOf", allowed: ["development", "production", "test"], dflt: "development" },
  bool("SIMULATORS", true),
  int("PORT", 4000, 0, 65535),
  { name: "PUBLIC_BASE_URL", kind: "url", protocols: ["http:", "https:"] },
  { name: "DATABASE_URL", kind: "url", protocols: ["postgres:", "postgresql:"] },
  bool("DEMO", true),
  { name: "LOG_LEVEL", kind: "oneOf", allowed: ["fatal", "error", "warn", "info", "debug", "trace"], dflt: "info" },
  { name: "LOG_FORMAT", kind: "oneOf", allowed: ["pretty", "json"], dflt: "pretty" },
  bool("LOG_REQUESTS", false),
  int("UPSTREAM_TIMEOUT_MS", 10000, 100, 120000),
  int("WEBHOOK_TIMEOUT_MS", 10000, 100, 60000),
  int("WEBHOOK_RETRY_FOR_MS", 86_400_000, 1000, 2_592_000_000),
  bool("EGRESS_ALLOW_PRIVATE_URLS", true),
  int("RATE_LIMIT_PER_MINUTE", 6000, 0, 1_000_000),
  int("BEARER_FAILURES_PER_MINUTE", 10, 1, 100_000),
  int("WS_MAX_LIFETIME_MS", 3_600_000, 1000, 604_800_000),
  int("WS_MAX_SOCKETS_PER_PRINCIPAL", 200, 1, 1_000_000),
  int("WS_MAX_SOCKETS_PER_IP", 1000, 1, 1_000_000),
  int("WS_MAX_SUBSCRIPTIONS_PER_SOCKET", 100, 1, 100_000),
  int("WS_KEEPALIVE_MS", 30_000, 1000, 600_000),
  int("GRAPHQL_MAX_COST", 5000, 10, 10_000_000),
  int("GRAPHQL_TIME_BUDGET_MS", 10_000, 100, 600_000),
  int("DB_POOL_SIZE", 10, 1, 100),
  int("QR_MONITOR_INTERVAL_MS", 3000, 200, 60000),
];

/** A reader's answer: the values, or the message after "Configuration error: ". */
type Read = (env: Env) => Record<string, unknown> | string;

const ours: Read = (env) => {
  const r = new EnvReader(env);
  const out: Record<string, unknown> = {};
  try {
    for (const s of SPECS)
      out[s.name] =
        s.kind === "int"
          ? r.int(s.name, s.dflt, s.min, s.max)
          : s.kind === "bool"
            ? r.bool(s.name, s.dflt)
            : s.kind === "oneOf"
              ? r.oneOf(s.name, s.allowed, s.dflt)
              : r.url(s.name, s.protocols);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  return out;
};

/** Unset and blank are alike (undefined); a value is trimmed. */
const blank = (v: unknown) => (typeof v === "string" && v.trim() !== "" ? v.trim() : undefined);

function zodOf(s: Spec): z.ZodType {
  const { name } = s;
  if (s.kind === "int") {
    const range = {
      error: (i: { input: unknown }) => `${name} must be between ${s.min} and ${s.max}, got ${String(i.input)}`,
    };
    const digits = z
      .string()
      .regex(/^\d+$/, { error: (i) => `${name} must be a whole number, got "${String(i.input)}"` });
    return z.preprocess(
      blank,
      digits.transform(Number).pipe(z.number().min(s.min, range).max(s.max, range)).default(s.dflt),
    );
  }
  if (s.kind === "bool") {
    const error = (i: { input: unknown }) => `${name} must be true or false, got "${String(i.input)}"`;
    const truthy = ["1", "true", "yes", "on"];
    const falsy = ["0", "false", "no", "off"];
    return z.preprocess(blank, z.stringbool({ truthy, falsy, case: "insensitive", error }).default(s.dflt));
  }
  if (s.kind === "oneOf") {
    const error = (i: { input: unknown }) => `${name} must be one of ${s.allowed.join(", ")}, got "${String(i.input)}"`;
    return z.preprocess(blank, z.enum(s.allowed as [string, ...string[]], { error }).default(s.dflt));
  }
  const url = z.string().check((ctx) => {
    if (!URL.canParse(ctx.value))
      ctx.issues.push({ code: "custom", input: ctx.value, message: `${name} must be a URL, got "${ctx.value}"` });
    else if (!s.protocols.includes(new URL(ctx.value).protocol))
      ctx.issues.push({
        code: "custom",
        input: ctx.value,
        message: `${name} must use ${s.protocols.join(" or ")}, got "${new URL(ctx.value).protocol}"`,
      });
  });
  return z.preprocess(
    blank,
    url
      .transform((v) => v.replace(/\/+$/, ""))
      .nullable()
      .default(null),
  );
}

const zodSchema = z.object(Object.fromEntries(SPECS.map((s) => [s.name, zodOf(s)])));
const zodRead: Read = (env) => {
  const r = zodSchema.safeParse(env);
  return r.success ? r.data : (r.error.issues[0]?.message ?? "invalid");
};

function envalidOf(s: Spec): ValidatorSpec<unknown> {
  if (s.kind === "int") return num({ default: s.dflt });
  if (s.kind === "bool") return envBool({ default: s.dflt });
  if (s.kind === "oneOf") return envStr({ choices: s.allowed, default: s.dflt });
  return envUrl({ default: undefined });
}

const envalidSpecs = Object.fromEntries(SPECS.map((s) => [s.name, envalidOf(s)]));
const envalidRead: Read = (env) => {
  let message = "";
  const out = cleanEnv(env, envalidSpecs, {
    reporter: ({ errors }) => {
      const [name, error] = Object.entries(errors)[0] ?? [];
      if (name !== undefined) message = `${name}: ${(error as Error).message}`;
    },
  });
  return message !== "" ? message : { ...out };
};

/** Values on which readers may differ: variable, value. */
const CASES: [string, string][] = [
  ["PORT", "8080"],
  ["PORT", " 8080 "],
  ["PORT", ""],
  ["PORT", "08080"],
  ["PORT", "1e3"],
  ["PORT", "80.5"],
  ["PORT", "0x50"],
  ["PORT", "70000"],
  ["PORT", "eighty"],
  ["LOG_REQUESTS", "On"],
  ["LOG_REQUESTS", "t"],
  ["LOG_REQUESTS", "2"],
  ["LOG_FORMAT", "xml"],
  ["PUBLIC_BASE_URL", "https://pay.example/"],
  ["PUBLIC_BASE_URL", "ftp://pay.example"],
  ["PUBLIC_BASE_URL", "pay.example"],
];

/** One variable's answer: its value, or the error printed. */
function shown(read: Read, name: string, value: string): string {
  const r = read({ NODE_ENV: "test", [name]: value });
  return typeof r === "string" ? `Configuration error: ${r}` : JSON.stringify(r[name] ?? null);
}

export function benchConfigSection(): Section[] {
  const env: Env = {
    NODE_ENV: "production",
    PORT: "8080",
    DATABASE_URL: "postgresql://pqr@db/pqr",
    LOG_REQUESTS: "on",
  };
  for (const s of SPECS) if (s.kind === "int") env[s.name] ??= String(s.min + 1);
  const speed = [
    compare(
      "zod",
      () => (typeof ours(env) === "string" ? 0 : 1),
      () => (typeof zodRead(env) === "string" ? 0 : 1),
    ),
    compare(
      "envalid",
      () => (typeof ours(env) === "string" ? 0 : 1),
      () => (typeof envalidRead(env) === "string" ? 0 : 1),
    ),
  ].map((r) => [
    `${SPECS.length} variables read, beside ${r.name}`,
    r.ours,
    r.baseline,
    Math.round((r.ours / r.baseline) * 100) / 100,
  ]);
  const behaviour = CASES.map(([name, value]) => {
    const mine = shown(ours, name, value);
    const same = (read: Read) => {
      const theirs = shown(read, name, value);
      return theirs === mine ? "same" : theirs;
    };
    return [`${name}=${JSON.stringify(value)}`, mine, same(zodRead), same(envalidRead)];
  });
  const agree = (col: number) => behaviour.filter((r) => r[col] === "same").length;
  return [
    {
      title: "Libraries: the configuration reader, ours beside zod and envalid (speed, reads/s)",
      columns: ["work", "ours", "library", "ours ÷ library"],
      rows: speed,
      notes: [
        "One op reads every variable of the list (24: whole numbers with bounds, booleans, one-of, URLs), as a start does once.",
        `Cold import (median of 5 fresh processes): zod ${importMs("zod")} ms, envalid ${importMs("envalid")} ms; ours is part of config.ts, loaded anyway. For scale, the service's own modules (dist/src/app.js, what \`serve\` imports before it opens anything): ${importMs("./dist/src/app.js")} ms.`,
      ],
    },
    {
      title:
        "Libraries: the configuration reader, what each answers (ours, then the library's answer where it differs)",
      columns: ["value", "ours", "zod (written for our messages)", "envalid (as meant)"],
      rows: behaviour,
      notes: [`Same as ours: zod ${agree(2)} of ${behaviour.length}, envalid ${agree(3)} of ${behaviour.length}.`],
    },
  ];
}
