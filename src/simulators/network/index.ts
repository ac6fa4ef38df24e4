import { randomBytes, randomInt, timingSafeEqual } from "node:crypto";
import express, { type NextFunction, type Request, type Response } from "express";
import type { FieldError } from "../../errors.js";
import {
  bodyRecord,
  controlBodyErrors,
  optionalString,
  requireString,
  sendControlError,
  sleep,
  faultControl,
} from "../http.js";

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
  /** Looks up the payee facts of an md5 we issued; the demo wires it to its transaction store. */
  describe?: (md5: string) => NetworkPaymentFacts | undefined;
}

export type NetworkFaultMode = "ok" | "error500" | "garbage" | "slow";
export const NETWORK_FAULT_MODES: readonly NetworkFaultMode[] = ["ok", "error500", "garbage", "slow"];

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
  /** Requests that passed auth, per endpoint, and the size of every valid bulk request. */
  calls: { md5: number; md5List: number };
  listBatchSizes: number[];
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
    calls: { md5: 0, md5List: 0 },
    listBatchSizes: [],
  };

  const api = express.Router();
  api.use(express.json({ limit: "64kb" }));
  api.use((req, res, next) => applyFault(state, res, next));
  api.use((req, res, next) =>
    bearerMatches(req, options.token) ? next() : envelope(res, 401, 1, "Unauthorized", 6, null),
  );

  api.post("/v1/check_transaction_by_md5", (req, res) => {
    state.calls.md5++;
    const md5 = typeof req.body?.md5 === "string" ? req.body.md5.toLowerCase() : "";
    if (!md5) return envelope(res, 400, 1, "Missing required fields.", 5, null);
    const tx = state.transactions.get(md5);
    if (!tx) return envelope(res, 200, 1, MSG_NOT_FOUND, 1, null);
    if (tx.status === "FAILED") return envelope(res, 200, 1, MSG_FAILED, 3, null);
    envelope(res, 200, 0, MSG_FOUND, null, transactionData(tx));
  });

  api.post("/v1/check_transaction_by_md5_list", (req, res) => {
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
      const tx = state.transactions.get(md5.toLowerCase());
      if (!tx) return { md5, status: "NOT_FOUND", message: MSG_NOT_FOUND, data: null };
      if (tx.status === "FAILED") return { md5, status: "FAILED", message: MSG_FAILED, data: null };
      return { md5, status: "SUCCESS", message: MSG_FOUND, data: transactionData(tx) };
    });
    envelope(res, 200, 0, MSG_FOUND, null, items);
  });

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

  controls.post("/sim/network/pay", (req, res) => {
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
    if (given.amount !== undefined && !AMOUNT.pattern.test(given.amount))
      details.push({ field: "amount", message: AMOUNT.message });
    if (given.currency !== undefined && !["USD", "KHR"].includes(given.currency)) {
      details.push({ field: "currency", message: "must be USD or KHR" });
    }
    if (details.length > 0) return sendControlError(res, "BAD_USER_INPUT", "invalid pay request", details);

    const known = describe?.(md5);
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
      acknowledgedDateMs: now,
    };
    state.transactions.set(md5, tx);
    res.json({ md5, status: tx.status, transaction: transactionData(tx) });
  });

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

  controls.use("/sim/network", controlBodyErrors);
  return controls;
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

function bearerMatches(req: Request, token: string): boolean {
  const header = req.get("authorization") ?? "";
  const match = /^Bearer (.+)$/i.exec(header);
  if (!match) return false;
  const a = Buffer.from(match[1]);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function applyFault(state: NetworkSimulatorState, res: Response, next: NextFunction): Promise<void> {
  const { mode, slowMs, variant } = state.fault;
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
