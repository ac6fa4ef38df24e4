/**
 * What Apollo Sandbox opens with on /graphql (not in production), and /graphiql too: one example of each kind of
 * operation, runnable against the demo tenant once the headers hold a demo key (docs/graphql.md). The
 * operations are checked against the schema and run by test/graphql/sandbox.test.ts, so they cannot go stale.
 *
 * Assembled from the module list's areas (AreaDefinition.explorer): the first area that declares example steps
 * leads (its steps, its variables, its demo key in the headers); the live-follow step is the core's, and shows the
 * transaction fields the areas ask it to (`watch`).
 */

/** One example operation of the leading area: what it does (a comment line above it), and the operation. */
export interface ExplorerStep {
  comment: string;
  operation: string;
}

/** An area's part of the explorers' example (module.ts AreaDefinition.explorer). */
export interface ExplorerPart {
  /** Example operations, when this area leads: the first issues a transaction (its answer has `transactionId`). */
  steps?: ExplorerStep[];
  /** The steps' variables (the live-follow step adds `transactionId`). */
  variables?: Record<string, unknown>;
  /** Transaction fields of its own the live-follow step shows besides `status`. */
  watch?: string[];
}

/** What the explorers read of an area: its explorer part, its key's x-auth-type, its field of demo.json's `keys`. */
export interface ExplorerArea {
  key: { authType: string };
  docsExample?: { demoKey: string };
  explorer?: ExplorerPart;
}

export interface SandboxExample {
  document: string;
  variables: Record<string, unknown>;
  headers: Record<string, string>;
  /** demo.json's `keys` field whose key the headers take in demo mode, and its x-auth-type. */
  demoKey: { field: string; authType: string } | null;
}

const HEAD = `# Payment QR Service: example operations. Put a key of data/demo.json in the headers
# (x-api-key, x-auth-type: api-key), pick an operation, press Run.
`;

const operationName = (operation: string): string => /^\w+\s+(\w+)/.exec(operation)?.[1] ?? "the first operation";

/** The example document, variables and headers of a module list's areas. */
export function sandboxExample(areas: readonly ExplorerArea[]): SandboxExample {
  const lead = areas.find((a) => (a.explorer?.steps?.length ?? 0) > 0);
  const steps = lead?.explorer?.steps ?? [];
  const watch = ["status", ...areas.flatMap((a) => a.explorer?.watch ?? [])].join(" ");
  const issuer = steps[0] === undefined ? "a generate" : operationName(steps[0].operation);
  const follow: ExplorerStep = {
    comment:
      "Follow it live over graphql-ws, authorised by the clientToken alone (the connection payload\n" +
      '#    {"clientToken": "ct_…"}, or the header Authorization: Bearer ct_…)',
    operation: `subscription WatchWithClientToken($transactionId: ID!) {
  transactionUpdated(transactionId: $transactionId) {
    id
    type
    transaction { ${watch} }
  }
}
`,
  };
  const document = HEAD + [...steps, follow].map((s, i) => `\n# ${i + 1}. ${s.comment}\n${s.operation}`).join("");
  const demoKey = lead?.docsExample?.demoKey;
  const authType = lead?.key.authType ?? "api-key";
  return {
    document,
    variables: { ...lead?.explorer?.variables, transactionId: `<transactionId from ${issuer}>` },
    headers: { "x-api-key": `<keys.${demoKey ?? "…"} from data/demo.json>`, "x-auth-type": authType },
    demoKey: demoKey === undefined ? null : { field: demoKey, authType },
  };
}
