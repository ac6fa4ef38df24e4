import { randomBytes } from "node:crypto";
import { createClient, type Client } from "graphql-ws";
import WebSocket from "ws";
import type { CliCommand, CliContext } from "../admin/cli.js";
import { EVENT_TYPES } from "../transactions/transaction-event.entity.js";
import { deliveryBody, deliveryHeaders } from "./signing.js";
import type { KeyKindSpec } from "../auth/key-kinds.js";
import type { AreaField } from "../module.js";
import { placeAfter } from "../transactions/area-views.js";

/**
 * `npm run admin -- listen --forward-to URL`: a merchant's local receiver gets the caller's events with no public
 * URL. Subscribes to `transactionUpdates` over graphql-ws and POSTs each event to the URL with the body and
 * headers a webhook delivery has, signed with a secret the merchant knows (docs/decisions/0103-listen-cli.md,
 * issue 18).
 */
/** The subscription: the snapshot's core keys and the areas' (`fields`: the snapshot keys the areas declare). */
const queryOf = (fields: readonly AreaField[]) => `subscription($lastEventId: ID) {
  transactionUpdates(lastEventId: $lastEventId) {
    id type createdAt meta
    transaction {
      transactionId area status amount currency expiredAt createdAt updatedAt
      ${fields.map((f) => (f.snapshot?.select ? `${f.name} ${f.snapshot.select}` : f.name)).join(" ")} completedAt payment
    }
  }
}`;

const FLAGS = ["forward-to", "events", "api-key", "auth-type", "secret"] as const;
type Flags = Partial<Record<(typeof FLAGS)[number], string>>;

interface Event {
  id: string;
  type: string;
  createdAt: string;
  meta: Record<string, unknown>;
  transaction: Record<string, unknown>;
}

function parse(args: string[]): Flags {
  const out: Flags = {};
  for (let i = 0; i < args.length; i += 2) {
    const name = args[i]?.startsWith("--") ? args[i].slice(2) : "";
    if (!(FLAGS as readonly string[]).includes(name)) throw new Error(`unknown argument "${args[i]}"`);
    if (args[i + 1] === undefined) throw new Error(`--${name} needs a value`);
    out[name as keyof Flags] = args[i + 1];
  }
  return out;
}

/**
 * The webhook body's transaction: the snapshot's keys in its order, absent ones left out as the outbox does (the
 * areas' keys each after the key its field names, as the store places them: transactions/record.ts snapshot).
 */
function snapshotOf(t: Record<string, unknown>, fields: readonly AreaField[]): Record<string, unknown> {
  const order = ["transactionId", "area", "status", "amount", "currency", "expiredAt", "createdAt", "updatedAt"];
  const optional = ["completedAt", "payment"];
  const present = (k: string) => (t[k] === null ? undefined : t[k]);
  const core: [string, unknown][] = [
    ...order.map((k): [string, unknown] => [k, t[k]]),
    ...optional.map((k): [string, unknown] => [k, present(k)]),
  ];
  const placed = fields.flatMap((f) =>
    f.snapshot !== undefined && present(f.name) !== undefined
      ? [{ name: f.name, after: f.snapshot.after, value: t[f.name] }]
      : [],
  );
  return placeAfter(core, placed);
}

interface Setup {
  target: URL;
  events: Set<string> | null;
  connectionParams: Record<string, string>;
  secret: string;
  secretSource: string;
  who: string;
  /** The snapshot keys the service's areas declare (commands.ts passes them). */
  fields: readonly AreaField[];
}

/** `kinds`: the service's key kinds (commands.ts passes its module list's), to tell a key's x-auth-type by its tag. */
function setup(flags: Flags, ctx: CliContext, kinds: readonly KeyKindSpec[]): Omit<Setup, "fields"> {
  if (!flags["forward-to"]) throw new Error("--forward-to URL is required (e.g. http://127.0.0.1:3000/hooks)");
  let target: URL;
  try {
    target = new URL(flags["forward-to"]);
  } catch {
    throw new Error(`--forward-to "${flags["forward-to"]}" is not a URL`);
  }
  if (!/^https?:$/.test(target.protocol)) throw new Error("--forward-to must be an http:// or https:// URL");
  const events = flags.events ? new Set(flags.events.split(",").filter(Boolean)) : null;
  for (const e of events ?? [])
    if (!(EVENT_TYPES as readonly string[]).includes(e))
      throw new Error(`unknown event kind "${e}"; known: ${EVENT_TYPES.join(", ")}`);
  const apiKey = flags["api-key"] ?? ctx.env.PQR_API_KEY;
  let connectionParams: Record<string, string>;
  let who: string;
  if (apiKey) {
    const tag = /^pqr_([a-z]+)_/.exec(apiKey)?.[1];
    const authType = flags["auth-type"] ?? kinds.find((k) => k.tag === tag)?.authType;
    if (!authType)
      throw new Error(`cannot tell the key's kind: add --auth-type ${kinds.map((k) => k.authType).join("|")}`);
    connectionParams = { "x-api-key": apiKey, "x-auth-type": authType };
    who = `key ${apiKey.slice(0, 14)}…`;
  } else if (ctx.adminToken) {
    connectionParams = { authorization: `Bearer ${ctx.adminToken}` };
    who = "every key (admin token)";
  } else
    throw new Error(
      "pass --api-key (or set ADMIN_TOKEN, or run it in the project's folder, beside the demo's DATA_DIR/demo.json)",
    );
  const [secret, secretSource] = flags.secret
    ? [flags.secret, "the secret given with --secret"]
    : ctx.env.WEBHOOK_SECRET
      ? [ctx.env.WEBHOOK_SECRET, "the secret in WEBHOOK_SECRET"]
      : ctx.demo.webhook?.secret
        ? [ctx.demo.webhook.secret, "the demo tenant's webhook secret (demo.json webhook.secret)"]
        : [`whsec_${randomBytes(24).toString("base64url")}`, "new for this session"];
  return { target, events, connectionParams, secret, secretSource, who };
}

async function forward(s: Setup, e: Event): Promise<string> {
  const body = deliveryBody(e.id, e.type, new Date(e.createdAt), {
    transaction: snapshotOf(e.transaction, s.fields),
    meta: e.meta,
  });
  const ts = Math.floor(Date.now() / 1000);
  const started = performance.now();
  let outcome: string;
  try {
    const res = await fetch(s.target, {
      method: "POST",
      redirect: "manual",
      signal: AbortSignal.timeout(10_000),
      headers: deliveryHeaders([s.secret], ts, body, e),
      body,
    });
    await res.arrayBuffer().catch(() => undefined);
    outcome = String(res.status);
  } catch (err) {
    const x = err as Error & { cause?: { code?: string; message?: string; errors?: { code?: string }[] } };
    const code = x.cause?.code ?? x.cause?.errors?.[0]?.code ?? x.cause?.message ?? x.message;
    outcome = x.name === "TimeoutError" ? "timeout" : `error ${code}`;
  }
  const ms = Math.round(performance.now() - started);
  const tx = String(e.transaction.transactionId);
  return `${new Date().toISOString()}  ${e.type.padEnd(19)} ${tx}  ${String(e.transaction.status).padEnd(8)} → ${outcome} (${ms} ms)`;
}

/** Subscribes until stopped; after a lost connection it subscribes again from the last event it forwarded. */
async function run(args: string[], ctx: CliContext, areas: ListenAreas): Promise<number> {
  let s: Setup;
  try {
    s = { ...setup(parse(args), ctx, areas.kinds), fields: areas.fields };
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  let lastEventId: string | undefined;
  let queue = Promise.resolve();
  let client: Client | null = null;
  let stopped = false;
  let announced = false;
  let failures = 0;
  const stop = new Promise<number>((resolve) => {
    const end = () => {
      stopped = true;
      void client?.dispose();
      void queue.then(() => resolve(0));
    };
    process.once("SIGINT", end);
    process.once("SIGTERM", end);
  });
  const once = (): Promise<number | null> =>
    new Promise((resolve) => {
      client = createClient({
        url: `${ctx.baseUrl.replace(/^http/, "ws")}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: s.connectionParams,
        retryAttempts: 0,
        on: {
          connected: () => {
            failures = 0;
            if (announced) console.log(`${new Date().toISOString()}  reconnected; replaying from the last event`);
          },
        },
      });
      client.subscribe<{ transactionUpdates: Event }>(
        { query: queryOf(s.fields), variables: { lastEventId } },
        {
          next: (v) => {
            const e = v.data?.transactionUpdates;
            if (!e) return;
            lastEventId = e.id;
            if (s.events && !s.events.has(e.type)) return;
            queue = queue.then(async () => console.log(await forward(s, e)));
          },
          error: (err) => {
            if (Array.isArray(err)) {
              console.error(`error: ${err.map((x: { message: string }) => x.message).join("; ")}`);
              return resolve(1);
            }
            const code = (err as { code?: number }).code;
            if (code === 4401 || code === 4403) {
              console.error(`error: the service refused the credentials (${code})`);
              return resolve(1);
            }
            resolve(null);
          },
          complete: () => resolve(null),
        },
      );
      // "Ready" means subscribed: the acknowledgement of the connection comes before the server has opened the
      // subscription, and an event in between would be missed. A query sent after it on the same socket is
      // answered once the server has handled the subscribe message before it.
      if (!announced)
        client.subscribe(
          { query: "{ __typename }" },
          {
            next: () => undefined,
            error: () => undefined,
            complete: () => {
              if (announced || stopped) return;
              announced = true;
              console.log(`Ready: forwarding ${s.events ? [...s.events].join(",") : "all events"} of ${s.who}`);
              console.log(`  from ${ctx.baseUrl} to ${s.target.href}`);
              console.log(
                `  signing with ${s.secretSource === "new for this session" ? `${s.secret} (new for this session)` : s.secretSource}`,
              );
            },
          },
        );
    });
  const loop = async (): Promise<number> => {
    while (!stopped) {
      const result = await once();
      void client?.dispose();
      if (result !== null) return result;
      if (stopped) break;
      if (failures++ === 0) console.log(`${new Date().toISOString()}  connection to ${ctx.baseUrl} lost; retrying`);
      await new Promise((r) => setTimeout(r, Math.min(5_000, 500 * failures)));
    }
    return 0;
  };
  return Promise.race([stop, loop()]);
}

/** What `listen` knows of the service's areas: their key kinds, and the keys they add to the snapshot. */
export interface ListenAreas {
  kinds: readonly KeyKindSpec[];
  fields: readonly AreaField[];
}

/** `npm run admin listen`, for the service's areas (commands.ts passes them). */
export function listenCommand(areas: ListenAreas): CliCommand {
  return {
    doc:
      "--forward-to URL [--events payment.completed,…] [--api-key KEY] [--secret whsec_…]: forward your events " +
      "to a local receiver as signed webhooks",
    run: (args, ctx) => run(args, ctx, areas),
  };
}
