import { randomBytes, randomInt, timingSafeEqual } from "node:crypto";
import express, { type NextFunction, type Request, type Response } from "express";
import type { FieldError } from "../../errors.js";
import {
  bodyRecord,
  controlBodyErrors,
  optionalMs,
  optionalString,
  requireString,
  sendControlError,
  sleep,
  faultControl,
} from "../http.js";
import { defaultLimits, limitsControl, rateLimiter, tokenRefuser, type NetworkLimits } from "./limits.js";

/**
 * The national network's md5 API as a local server: same paths, Bearer auth, and response
 * envelope as the real one, plus /sim/network/* controls that play the payer (pay, fail) and
 * inject faults. The app mounts `api` under /sim/network-api and `controls` at the root.
 */

/** What the network reads from the QR that was paid (the payee side of the transfer). */
export interface NetworkPaymentFacts {
  toAccountId: string;
  amount: string;
  currency: string;
  description?: string;
}

export interface NetworkSimulatorOptions {
  token: string;
  clock?: () => Date;
  /** The e-mail registered for renew_token (default renewals@merchant.example). */
  email?: string;
  /** Looks up the payee facts of an md5 we issued; the demo wires it to its transaction store. */
  describe?: (md5: string) => NetworkPaymentFacts | undefined | Promise<NetworkPaymentFacts | undefined>;
}

/**
 * `md5list-forbidden`: the list endpoint answers a bare nginx HTML 403 (seen in production with a valid
 * token) while the single-md5 endpoint works.
 */
export type NetworkFaultMode =
  "ok" | "error500" | "garbage" | "slow" | "md5list-forbidden" | "geo-blocked" | "deeplink-error";
/** `geo-blocked`: every API call answers the same HTML 403, as the network does to callers outside Cambodia. */
export const NETWORK_FAULT_MODES: readonly NetworkFaultMode[] = [
  "ok",
  "error500",
  "garbage",
  "slow",
  "md5list-forbidden",
  "geo-blocked",
  "deeplink-error",
];

export interface NetworkSimTransaction {
  md5: string;
  status: "SUCCESS" | "FAILED";
  hash: string;
  fromAccountId: string;
  toAccountId: string;
  currency: string;
  amount: string;
  description: string;
  externalRef: string;
  createdDateMs: number;
  acknowledgedDateMs: number;
}

export interface NetworkSimulatorState {
  transactions: Map<string, NetworkSimTransaction>;
  fault: { mode: NetworkFaultMode; slowMs: number; variant: "text" | "json" };
  /**
   * Requests that passed auth, per endpoint, and the size of every valid bulk request; `rateLimited` and
   * `unauthorized`: calls answered 429 (POST /sim/network/limits) and 401.
   */
  calls: {
    md5: number;
    md5List: number;
    md5ListRefused: number;
    deeplink: number;
    rateLimited: number;
    unauthorized: number;
  };
  /** Start times (ms since the simulator was made, real time) of the single-md5 calls that passed auth. */
  md5CallTimes: number[];
  limits: NetworkLimits;
  listBatchSizes: number[];
  /** Tokens the network accepts (until the `exp` of those that are JWTs); renew_token adds one. */
  tokens: Set<string>;
  renewals: { calls: number; works: boolean };
  /** API requests being answered now, and the most at once (what a client's concurrency bound looks like). */
  inFlight: number;
  maxInFlight: number;
}

export interface NetworkSimulator {
  api: express.Router;
  controls: express.Router;
  state: NetworkSimulatorState;
}

const MAX_LIST = 50;
const MD5 = { pattern: /^[0-9a-fA-F]{32}$/, message: "must be 32 hexadecimal characters" };
const AMOUNT = { pattern: /^\d+(\.\d{1,2})?$/, message: 'must be a decimal string such as "10.50"' };
const MSG_FOUND = "Getting transaction successfully.";
const MSG_NOT_FOUND = "Transaction could not be found. Please check and try again.";
const MSG_FAILED = "Transaction failed.";
const PAYERS = ["sokha_chan@aclb", "dara_kim@abaa", "vanna_sok@wing", "piseth_ly@cadi", "sreymom_heng@ppcb"];

export function createNetworkSimulator(options: NetworkSimulatorOptions): NetworkSimulator {
  const clock = options.clock ?? (() => new Date());
  const state: NetworkSimulatorState = {
    transactions: new Map(),
    fault: { mode: "ok", slowMs: 1000, variant: "text" },
    calls: { md5: 0, md5List: 0, md5ListRefused: 0, deeplink: 0, rateLimited: 0, unauthorized: 0 },
    md5CallTimes: [],
    limits: defaultLimits(),
    listBatchSizes: [],
    inFlight: 0,
    maxInFlight: 0,
    tokens: new Set([options.token]),
    renewals: { calls: 0, works: true },
  };
  const email = options.email ?? "renewals@merchant.example";
  const started = performance.now();

  const api = express.Router();
  api.use((_req, res, next) => {
    state.maxInFlight = Math.max(state.maxInFlight, ++state.inFlight);
    res.on("close", () => state.inFlight--);
    next();
  });
  api.use(express.json({ limit: "64kb" }));
  api.use((req, res, next) => applyFault(state, res, next));
  api.use(rateLimiter(state, clock));
  // The token is renewed by e-mail, without a bearer token (the expired one is what is being replaced).
  api.post("/v1/renew_token", (req, res) => {
    state.renewals.calls++;
    const given = typeof req.body?.email === "string" ? req.body.email : "";
    if (!given) return envelope(res, 400, 1, "Missing required fields.", 5, null);
    if (given.toLowerCase() !== email.toLowerCase()) return envelope(res, 200, 1, "Not registered.", 10, null);
    if (!state.renewals.works) return envelope(res, 200, 1, "Email server is down.", 7, null);
    const token = issueToken(clock, TOKEN_LIFETIME_MS);
    state.tokens.add(token);
    envelope(res, 200, 0, "Token has been issued", null, { token });
  });
  api.use(tokenRefuser(state));
  api.use((req, res, next) => {
    if (acceptedToken(req, state.tokens, clock)) return next();
    state.calls.unauthorized++;
    envelope(res, 401, 1, "Unauthorized", 6, null);
  });

  api.post("/v1/check_transaction_by_md5", (req, res) => {
    state.calls.md5++;
    state.md5CallTimes.push(performance.now() - started);
    const md5 = typeof req.body?.md5 === "string" ? req.body.md5.toLowerCase() : "";
    if (!md5) return envelope(res, 400, 1, "Missing required fields.", 5, null);
    const tx = recorded(state, md5, clock);
    if (!tx) return envelope(res, 200, 1, MSG_NOT_FOUND, 1, null);
    if (tx.status === "FAILED") return envelope(res, 200, 1, MSG_FAILED, 3, null);
    envelope(res, 200, 0, MSG_FOUND, null, transactionData(tx));
  });

  // A short link that opens a banking app; failures are HTTP 200 with a non-zero responseCode, as upstream.
  api.post("/v1/generate_deeplink_by_qr", (req, res) => {
    state.calls.deeplink++;
    const body = typeof req.body === "object" && req.body !== null ? (req.body as Record<string, unknown>) : {};
    const info = typeof body.sourceInfo === "object" && body.sourceInfo !== null ? body.sourceInfo : {};
    const fields = ["appIconUrl", "appName", "appDeepLinkCallback"].map((f) => (info as Record<string, unknown>)[f]);
    if (typeof body.qr !== "string" || body.qr === "" || !fields.every((v) => typeof v === "string" && v !== ""))
      return envelope(res, 200, 1, "Missing required fields.", 5, null);
    if (state.fault.mode === "deeplink-error") return envelope(res, 200, 1, "Deeplink provider error.", 4, null);
    envelope(res, 200, 0, "Getting Deeplink successfully.", null, {
      shortLink: `https://bakong.page.link/${randomBytes(8).toString("base64url")}`,
    });
  });

  api.post("/v1/check_transaction_by_md5_list", (req, res) => checkList(state, clock, req, res));

  api.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) return next(err);
    envelope(res, 400, 1, "Missing required fields.", 5, null);
  });

  return { api, controls: createControls(state, clock, options.describe), state };
}

function createControls(
  state: NetworkSimulatorState,
  clock: () => Date,
  describe: NetworkSimulatorOptions["describe"],
): express.Router {
  const controls = express.Router();
  controls.use("/sim/network", express.json({ limit: "64kb" }));

  controls.post("/sim/network/pay", (req, res) => pay(state, clock, describe, req, res));

  controls.post("/sim/network/fail", (req, res) => {
    const details: FieldError[] = [];
    const md5 = requireString(bodyRecord(req.body, details), "md5", details, MD5).toLowerCase();
    if (details.length > 0) return sendControlError(res, "BAD_USER_INPUT", "invalid fail request", details);
    const existing = state.transactions.get(md5);
    if (existing)
      return sendControlError(res, "CONFLICT", `md5 is already ${existing.status === "SUCCESS" ? "paid" : "failed"}`);
    const now = clock().getTime();
    state.transactions.set(md5, {
      md5,
      status: "FAILED",
      hash: "",
      fromAccountId: "",
      toAccountId: "",
      currency: "",
      amount: "",
      description: "",
      externalRef: "",
      createdDateMs: now,
      acknowledgedDateMs: now,
    });
    res.json({ md5, status: "FAILED" });
  });

  controls.post("/sim/network/fault", faultControl(NETWORK_FAULT_MODES, state));
  controls.post("/sim/network/limits", limitsControl(state));

  // A token the network accepts, valid for `expiresInMs` (what an operator gets by e-mail); `renewalWorks`
  // makes renew_token fail like the real one sometimes does.
  controls.post("/sim/network/token", (req, res) => {
    const details: FieldError[] = [];
    const body = bodyRecord(req.body, details);
    const expiresInMs = optionalMs(body, "expiresInMs", details, 400 * 24 * 3600_000) ?? TOKEN_LIFETIME_MS;
    if (body.renewalWorks !== undefined && typeof body.renewalWorks !== "boolean")
      details.push({ field: "renewalWorks", message: "must be a boolean" });
    if (details.length > 0) return sendControlError(res, "BAD_USER_INPUT", "invalid token request", details);
    if (typeof body.renewalWorks === "boolean") state.renewals.works = body.renewalWorks;
    const token = issueToken(clock, expiresInMs);
    state.tokens.add(token);
    res.json({ token, expiresAt: new Date(clock().getTime() + expiresInMs).toISOString() });
  });

  controls.use("/sim/network", controlBodyErrors);
  return controls;
}

/** check_transaction_by_md5_list: a bare JSON array of 1 to 50 md5s, an item per md5 (403 in md5list-forbidden mode). */
function checkList(state: NetworkSimulatorState, clock: () => Date, req: Request, res: Response): void {
  if (state.fault.mode === "md5list-forbidden") {
    state.calls.md5ListRefused++;
    res.status(403).type("text/html").send(NGINX_403);
    return;
  }
  state.calls.md5List++;
  const list: unknown = req.body;
  if (
    !Array.isArray(list) ||
    list.length === 0 ||
    list.length > MAX_LIST ||
    !list.every((m) => typeof m === "string")
  ) {
    return envelope(res, 400, 1, `The body must be a JSON array of 1 to ${MAX_LIST} md5 strings.`, 5, null);
  }
  state.listBatchSizes.push(list.length);
  const items = (list as string[]).map((md5) => {
    const tx = recorded(state, md5.toLowerCase(), clock);
    if (!tx) return { md5, status: "NOT_FOUND", message: MSG_NOT_FOUND, data: null };
    if (tx.status === "FAILED") return { md5, status: "FAILED", message: MSG_FAILED, data: null };
    return { md5, status: "SUCCESS", message: MSG_FOUND, data: transactionData(tx) };
  });
  envelope(res, 200, 0, MSG_FOUND, null, items);
}

/** POST /sim/network/pay: the md5 is paid (the payee's facts from the body, else from what the QR was issued for). */
async function pay(
  state: NetworkSimulatorState,
  clock: () => Date,
  describe: NetworkSimulatorOptions["describe"],
  req: Request,
  res: Response,
): Promise<void> {
  const details: FieldError[] = [];
  const body = bodyRecord(req.body, details);
  const md5 = requireString(body, "md5", details, MD5).toLowerCase();
  const given = {
    toAccountId: optionalString(body, "toAccountId", details),
    amount: optionalString(body, "amount", details),
    currency: optionalString(body, "currency", details),
    description: optionalString(body, "description", details),
    fromAccountId: optionalString(body, "fromAccountId", details),
  };
  // The network records (acknowledges) the payment this long after the payer sent it; until then it is not found.
  const acknowledgeAfterMs = optionalMs(body, "acknowledgeAfterMs", details, 7 * 24 * 3600_000) ?? 0;
  if (given.amount !== undefined && !AMOUNT.pattern.test(given.amount))
    details.push({ field: "amount", message: AMOUNT.message });
  if (given.currency !== undefined && !["USD", "KHR"].includes(given.currency)) {
    details.push({ field: "currency", message: "must be USD or KHR" });
  }
  if (details.length > 0) return sendControlError(res, "BAD_USER_INPUT", "invalid pay request", details);

  const known = await describe?.(md5);
  const facts = {
    toAccountId: given.toAccountId ?? known?.toAccountId,
    amount: given.amount ?? known?.amount,
    currency: given.currency ?? known?.currency,
  };
  const missing = Object.entries(facts).filter(([, v]) => v === undefined);
  if (missing.length > 0) {
    const message = "the simulator does not know this md5's payee; pass it in the body";
    return sendControlError(
      res,
      "BAD_USER_INPUT",
      message,
      missing.map(([field]) => ({ field, message: "is required for an md5 the simulator cannot describe" })),
    );
  }
  const existing = state.transactions.get(md5);
  if (existing)
    return sendControlError(res, "CONFLICT", `md5 is already ${existing.status === "SUCCESS" ? "paid" : "failed"}`);

  const now = clock().getTime();
  const tx: NetworkSimTransaction = {
    md5,
    status: "SUCCESS",
    hash: randomBytes(32).toString("hex"),
    fromAccountId: given.fromAccountId ?? PAYERS[randomInt(PAYERS.length)],
    toAccountId: facts.toAccountId as string,
    currency: facts.currency as string,
    amount: facts.amount as string,
    description: given.description ?? known?.description ?? "",
    externalRef: `100FT${randomInt(10 ** 9, 10 ** 10)}`,
    createdDateMs: now - randomInt(300, 1500),
    acknowledgedDateMs: now + acknowledgeAfterMs,
  };
  state.transactions.set(md5, tx);
  res.json({ md5, status: tx.status, transaction: transactionData(tx) });
}

const NGINX_403 =
  "<html>\r\n<head><title>403 Forbidden</title></head>\r\n<body>\r\n<center><h1>403 Forbidden</h1></center>\r\n" +
  "<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";

/** A paid or failed md5 as the network shows it: only once it has recorded (acknowledged) the payment. */
function recorded(state: NetworkSimulatorState, md5: string, clock: () => Date): NetworkSimTransaction | undefined {
  const tx = state.transactions.get(md5);
  return tx !== undefined && tx.acknowledgedDateMs <= clock().getTime() ? tx : undefined;
}

function transactionData(tx: NetworkSimTransaction): Record<string, unknown> {
  return {
    hash: tx.hash,
    fromAccountId: tx.fromAccountId,
    toAccountId: tx.toAccountId,
    currency: tx.currency,
    amount: Number(tx.amount),
    description: tx.description,
    createdDateMs: tx.createdDateMs,
    acknowledgedDateMs: tx.acknowledgedDateMs,
    externalRef: tx.externalRef,
  };
}

function envelope(
  res: Response,
  http: number,
  responseCode: 0 | 1,
  responseMessage: string,
  errorCode: number | null,
  data: unknown,
): void {
  res.status(http).json({ responseCode, responseMessage, errorCode, data });
}

/** The network's tokens are JWTs valid about 90 days. */
const TOKEN_LIFETIME_MS = 90 * 24 * 3600_000;

function issueToken(clock: () => Date, lifetimeMs: number): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  const iat = Math.floor(clock().getTime() / 1000);
  const claims = { data: { id: randomBytes(6).toString("hex") }, iat, exp: iat + Math.floor(lifetimeMs / 1000) };
  return `${part({ alg: "HS256", typ: "JWT" })}.${part(claims)}.${randomBytes(32).toString("base64url")}`;
}

/** A token it issued (or was configured with), and, if it is a JWT with `exp`, not expired. */
function acceptedToken(req: Request, tokens: Set<string>, clock: () => Date): boolean {
  const header = req.get("authorization") ?? "";
  const match = /^Bearer (.+)$/i.exec(header);
  if (!match) return false;
  const given = Buffer.from(match[1]);
  const known = [...tokens].find((t) => {
    const b = Buffer.from(t);
    return b.length === given.length && timingSafeEqual(b, given);
  });
  if (known === undefined) return false;
  try {
    const exp = (JSON.parse(Buffer.from(known.split(".")[1] ?? "", "base64url").toString()) as { exp?: unknown }).exp;
    return typeof exp !== "number" || exp * 1000 > clock().getTime();
  } catch {
    return true;
  }
}

async function applyFault(state: NetworkSimulatorState, res: Response, next: NextFunction): Promise<void> {
  const { mode, slowMs, variant } = state.fault;
  if (mode === "geo-blocked") {
    res.status(403).type("text/html").send(NGINX_403);
    return;
  }
  if (mode === "error500") {
    res.status(500).type("text/html").send("<html><body><h1>500 Internal Server Error</h1></body></html>");
    return;
  }
  if (mode === "garbage") {
    if (variant === "json") res.status(200).json({ responseCode: "OK", result: [] });
    else res.status(200).type("text/plain").send("upstream maintenance: try later");
    return;
  }
  if (mode === "slow") await sleep(slowMs);
  next();
}
