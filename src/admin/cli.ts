import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { hostname, userInfo } from "node:os";
import type { KeyKindSpec } from "../auth/key-kinds.js";

interface Command {
  /** Its help line; from the service's key kinds where it names them (`key:create`). */
  doc: string | ((kinds: readonly KeyKindSpec[]) => string);
  query: string;
  input?: boolean;
  args?: string[];
  /**
   * A variable that is a secret: read from standard input (its first line) or `--file PATH`, never from the
   * command line, which any user of the machine can read (/proc/<pid>/cmdline, ps).
   */
  secret?: string;
  /** The variables from the flags, where they are not the flags as given (e.g. a word the operator types → an enum). */
  variables?: (flags: Record<string, unknown>) => Record<string, unknown>;
  /** What the command prints of its answer, where that is not the answer's JSON (e.g. one line). */
  print?: (data: unknown) => string;
}

interface Rechecked {
  recheckPayment: {
    outcome: string;
    detail: string;
    recorded: boolean;
    windowEndsAt: string;
    transaction: { id: string; area: string; status: string; latePayment: boolean };
  };
}

/** `recheck`'s one line: the transaction, what the upstream said, what it now is. */
function recheckLine(data: unknown): string {
  const r = (data as Rechecked).recheckPayment;
  const tx = r.transaction;
  const now = `${tx.status}${tx.latePayment ? " (late payment)" : ""}`;
  return `${tx.id} (${tx.area}): ${r.outcome}, ${r.recorded ? "recorded" : "nothing recorded"}, now ${now}: ${r.detail}`;
}

/** Who resolves a held payment from the CLI: recorded with the resolution (docs/decisions/0183-held-payments.md). */
function cliOperator(): string {
  try {
    return `cli (${userInfo().username}@${hostname()})`;
  } catch {
    return "cli";
  }
}

const HELD_FIELDS =
  "id area status amount currency merchantId createdAt mismatch { fields expected { amount currency account } " +
  "arrived { amount currency account } reference source detectedAt late }";

/** `npm run admin -- <command> [--field value ...]`: operator commands over the admin GraphQL API of a running service. */
const COMMANDS: Record<string, Command> = {
  merchants: {
    doc: "list merchants",
    query:
      "query { merchants { id name accountType bakongAccountId merchantName merchantCity merchantId acquiringBank defaultCurrency } }",
  },
  "merchant:create": {
    doc:
      "--name --accountType individual|merchant --bakongAccountId --merchantName --merchantCity " +
      "[--merchantId --acquiringBank --merchantCategoryCode --defaultCurrency 116|840]",
    query: "mutation($input: MerchantInput!) { createMerchant(input: $input) { id name } }",
    input: true,
  },
  "gateway-config:create": {
    doc: "--merchantId --name --upstreamMerchantId --apiSecret [--qrImageTemplate template3_color]",
    query:
      "mutation($input: GatewayConfigInput!) { createGatewayConfig(input: $input) { id name upstreamMerchantId " +
      "qrImageTemplate } }",
    input: true,
  },
  "gateway-config:update": {
    doc: "--id [--name --upstreamMerchantId --qrImageTemplate]",
    query:
      "mutation($id: ID!, $input: GatewayConfigInput!) { updateGatewayConfig(id: $id, input: $input) { id name " +
      "upstreamMerchantId qrImageTemplate } }",
    input: true,
    args: ["id"],
  },
  "gateway-configs": {
    doc: "list hosted-gateway configurations",
    query: "query { gatewayConfigs { id merchantId name upstreamMerchantId qrImageTemplate } }",
  },
  "gateway-qr-templates": {
    doc: "the QR image templates the gateway documents (a configuration's qrImageTemplate), and the default",
    query: "query { gatewayQrImageTemplates { names defaultName } }",
  },
  "link-config:create": {
    doc: "--merchantId --name --url --currency 116|840 [--protocol payway --expectedPayee name@bank]",
    query:
      "mutation($input: LinkConfigInput!) { createLinkConfig(input: $input) " +
      "{ id name url currency protocol expectedPayee } }",
    input: true,
  },
  "link-config:update": {
    doc: '--id [--name --url --currency --protocol --expectedPayee name@bank ("" clears: the next QR records it)]',
    query:
      "mutation($id: ID!, $input: LinkConfigInput!) { updateLinkConfig(id: $id, input: $input) " +
      "{ id name url currency protocol expectedPayee expectedPayeeSource } }",
    input: true,
    args: ["id"],
  },
  "link-configs": {
    doc: "list payment-link configurations (expectedPayee: the account every QR must pay, and who set it)",
    query: "query { linkConfigs { id merchantId name url currency protocol expectedPayee expectedPayeeSource } }",
  },
  "key:create": {
    doc: (kinds) => {
      const targets = [...new Set(kinds.flatMap((k) => (k.target === undefined ? [] : [`--${k.target.field}`])))];
      const names = kinds.length === 0 ? "<key kind>" : kinds.map((k) => k.kind).join("|");
      return `--merchantId --kind ${names} [${["--label", ...targets].join(" ")}]`;
    },
    query: "mutation($input: ApiKeyInput!) { createApiKey(input: $input) { apiKey key { id kind prefix } } }",
    input: true,
  },
  "key:revoke": { doc: "--id", query: "mutation($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }", args: ["id"] },
  keys: { doc: "list API keys", query: "query { apiKeys { id merchantId kind label prefix lastUsedAt revokedAt } }" },
  "webhook:create": {
    doc: "--apiKeyId --url [--events payment.completed,payment.failed]",
    query:
      "mutation($input: WebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret endpoint { id url events enabled } } }",
    input: true,
  },
  "network-token": {
    doc: "the national network API token in use: source, expiry, warning",
    query: "query { networkToken { source expiresAt updatedAt warning } }",
  },
  "network-token:set": {
    doc:
      "[--file PATH]  replace the network API token, read from standard input or the file (stored encrypted; " +
      "every process uses it at once)",
    query: "mutation($token: String!) { setNetworkToken(token: $token) { source expiresAt updatedAt warning } }",
    secret: "token",
  },
  mismatches: {
    doc: "list held payments: money arrived that is not what was asked (resolve each with mismatch:resolve)",
    query: `query { transactions(first: 100, filter: { mismatched: true }) { edges { node { ${HELD_FIELDS} } } } }`,
  },
  "mismatch:resolve": {
    doc: "--transactionId --action accept|fail [--note TEXT] [--by NAME]  accept a held payment as paid (SUCCESS) or mark it failed",
    query:
      "mutation($input: ResolveMismatchInput!) { resolveMismatch(input: $input) { id status " +
      "mismatch { resolution { action by at note } } } }",
    variables: ({ action, by, ...rest }) => ({
      input: {
        ...rest,
        action: action === "accept" ? "ACCEPT_AS_PAID" : action === "fail" ? "MARK_FAILED" : action,
        by: by ?? cliOperator(),
      },
    }),
  },
  recheck: {
    doc:
      "--id TRANSACTION_ID  ask the upstream again about a PENDING or EXPIRED payment (records a paid answer, late " +
      "if it had expired); prints one line",
    query:
      "mutation($id: ID!) { recheckPayment(transactionId: $id) { outcome detail recorded windowEndsAt " +
      "transaction { id area status latePayment } } }",
    variables: ({ id }) => {
      if (typeof id !== "string" || id === "") throw new Error("recheck needs --id TRANSACTION_ID");
      return { id };
    },
    print: recheckLine,
  },
  webhooks: {
    doc: "list webhook endpoints",
    query: "query { webhookEndpoints { id apiKeyId url events enabled disabledReason } }",
  },
};

function parseFlags(args: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith("--")) throw new Error(`unexpected argument "${a}"`);
    const name = a.slice(2);
    const value = args[i + 1];
    if (value === undefined) throw new Error(`--${name} needs a value`);
    i++;
    out[name] = /^(defaultCurrency|currency)$/.test(name)
      ? Number(value)
      : name === "events"
        ? value.split(",").filter(Boolean)
        : value;
  }
  return out;
}

/** The first line of a stream (a pasted or piped secret), without its line ending. */
async function firstLine(input: NodeJS.ReadableStream): Promise<string> {
  let text = "";
  for await (const chunk of input) {
    text += String(chunk);
    const end = text.indexOf("\n");
    if (end >= 0) return text.slice(0, end);
    // Nobody pastes a secret this long: stop reading rather than buffer a stream without end.
    if (text.length > 64 * 1024) break;
  }
  return text;
}

/** The command's GraphQL variables from its flags, and its secret from standard input or `--file`. */
async function commandVariables(
  name: string,
  cmd: Command,
  args: string[],
  stdin: NodeJS.ReadableStream & { isTTY?: boolean },
): Promise<Record<string, unknown>> {
  const flags = parseFlags(args);
  if (cmd.variables !== undefined) return cmd.variables(flags);
  if (cmd.secret === undefined) {
    if (!cmd.input) return flags;
    // `args` are the operation's own arguments (an update's id); every other flag is a field of its input.
    const own = new Set(cmd.args ?? []);
    const input = Object.fromEntries(Object.entries(flags).filter(([k]) => !own.has(k)));
    return { ...Object.fromEntries(Object.entries(flags).filter(([k]) => own.has(k))), input };
  }
  const { file, [cmd.secret]: given, ...rest } = flags;
  if (given !== undefined)
    throw new Error(
      `${name} does not take --${cmd.secret}: other users of this machine can read a command line. Pipe it on ` +
        `standard input (printf '%s' "$TOKEN" | npm run admin -- ${name}) or pass --file PATH`,
    );
  if (file === undefined && stdin.isTTY) console.error(`Paste the ${cmd.secret}, then press Enter:`);
  const secret = (file === undefined ? await firstLine(stdin) : readFileSync(String(file), "utf8")).trim();
  if (secret === "")
    throw new Error(`${name}: no ${cmd.secret} on standard input${file === undefined ? "" : ` or in ${String(file)}`}`);
  return { ...rest, [cmd.secret]: secret };
}

/** What a command that is more than one GraphQL call receives (e.g. `listen`, registered by commands.ts). */
export interface CliContext {
  baseUrl: string;
  /** The admin token from ADMIN_TOKEN or DATA_DIR/demo.json, when there is one. */
  adminToken?: string;
  /** DATA_DIR/demo.json of a demo service, when there is one. */
  demo: { webhook?: { secret?: string }; keys?: Record<string, string> };
  env: Record<string, string | undefined>;
}

export interface CliCommand {
  doc: string;
  run(args: string[], ctx: CliContext): Promise<number>;
}

export interface CliOptions {
  /** Commands that are more than one GraphQL call (commands.ts registers `listen`). */
  extra?: Record<string, CliCommand>;
  /** The kinds of API key of the service's areas (commands.ts, from its module list): the help names them. */
  kinds?: readonly KeyKindSpec[];
  /** Where a command's secret is read from (tests pass a stream of their own). */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
}

/**
 * Where the CLI must run, said in one line instead of a stack trace: it finds the service's address and admin token
 * in DATA_DIR/demo.json (./data by default, relative to where it runs), so outside the project's folder it has none.
 */
export function noTokenMessage(demoFile: string): string {
  return (
    `ADMIN_TOKEN is not set and there is no ${resolve(demoFile)}: run this in the project's folder (where npm start ` +
    "keeps its DATA_DIR, ./data), or set DATA_DIR to that directory, or set ADMIN_TOKEN (and PQR_URL) for another service"
  );
}

/** A service that does not answer, said in one line (fetch's own error is a stack of undici frames). */
export function unreachableMessage(baseUrl: string, err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (err as Error).message;
  return `cannot reach the service at ${baseUrl} (${why}): is it running (npm start)? set PQR_URL to its address`;
}

export async function runAdminCli(
  argv: string[],
  env: Record<string, string | undefined>,
  opts: CliOptions = {},
): Promise<number> {
  const { extra = {}, kinds = [], stdin = process.stdin } = opts;
  const [command, ...rest] = argv;
  const cmd = command ? COMMANDS[command] : undefined;
  const special = command ? extra[command] : undefined;
  if (!cmd && !special) {
    console.log(
      "usage: npm run admin -- <command> [--flag value ...]\nenvironment: PQR_URL (default from " +
        "DATA_DIR/demo.json or http://127.0.0.1:4000), ADMIN_TOKEN (default from DATA_DIR/demo.json)\n",
    );
    for (const [name, c] of Object.entries({ ...COMMANDS, ...extra }))
      console.log(`  ${name.padEnd(22)} ${typeof c.doc === "string" ? c.doc : c.doc(kinds)}`);
    return command === undefined || command === "help" ? 0 : 2;
  }
  const demoFile = join(env.DATA_DIR ?? "./data", "demo.json");
  const demo = existsSync(demoFile)
    ? (JSON.parse(readFileSync(demoFile, "utf8")) as CliContext["demo"] & { baseUrl?: string; adminToken?: string })
    : {};
  const baseUrl = env.PQR_URL ?? demo.baseUrl ?? `http://127.0.0.1:${env.PORT ?? 4000}`;
  const token = env.ADMIN_TOKEN ?? demo.adminToken;
  if (special) return special.run(rest, { baseUrl, adminToken: token, demo, env });
  if (!cmd) return 2;
  if (!token) {
    console.error(noTokenMessage(demoFile));
    return 2;
  }
  let variables: Record<string, unknown> = {};
  try {
    variables = await commandVariables(command, cmd, rest, stdin);
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  let res: Response;
  try {
    res = await fetch(`${baseUrl}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: cmd.query, variables }),
    });
  } catch (err) {
    console.error(unreachableMessage(baseUrl, err));
    return 1;
  }
  const json = (await res.json()) as {
    data?: unknown;
    errors?: { message: string; extensions?: { details?: unknown } }[];
  };
  if (json.errors?.length) {
    for (const e of json.errors) console.error(`error: ${e.message}`);
    return 1;
  }
  console.log(cmd.print === undefined ? JSON.stringify(json.data, null, 2) : cmd.print(json.data));
  return 0;
}
