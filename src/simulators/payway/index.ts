// A twin of an ABA PayWay payment link (link.payway.com.kh/ABAPAY…) built from what public code shows of the
// real one (docs/link-simulator.md): the page on one origin, its API on another, and controls to play the payer.
//
//   const twin = createPaywayTwin({ makeQr, apiOrigin: () => "http://127.0.0.1:5001" });
//   pageServer.use(twin.page); apiServer.use(twin.api); pageServer.use(twin.controls);

import express, { type Request, type Response } from "express";
import type { FieldError } from "../../errors.js";
import { isRecord, paywayRequestTime } from "../../upstreams/payway.js";
import { bodyRecord, controlBodyErrors, sendControlError } from "../http.js";
import { twinApiRouter } from "./twin-api.js";
import { callerAddress, initialTwinState, twinFaultControl, type TwinState } from "./twin-fault.js";
import { cloudflareBlockPage, renderTwinNotice, renderTwinPage, TWIN_STYLESHEET } from "./twin-page.js";
import { embedsScript, hostileScript, webrtcScript } from "./twin-hostile.js";
import { detectionScript, headlessRequest, sendChallenge, TwinEdge } from "./twin-edge.js";
import { DEFAULT_LINK_OPTIONS, linkOptionsOf } from "./twin-layout.js";
import { TwinStore, type ControlOutcome, type TwinClient, type TwinCurrency, type TwinLink } from "./twin-store.js";

export type { TwinFaultMode } from "./twin-fault.js";
export type { TwinAction, TwinCurrency, TwinLink } from "./twin-store.js";

export interface PaywayTwinOptions {
  /** Builds the KHQR string for an amount (the app wires the real encoder). */
  /** `merchant`: the link's merchant, the payee its QR names (KHQR tag 59). */
  makeQr: (amount: string, currency: 116 | 840, merchant: string) => string;
  /** The API's origin as the page's script calls it (known once its server listens). */
  apiOrigin: () => string;
  clock?: () => number;
  /** How often the page polls the status (the real page: 3 s). */
  pollIntervalMs?: number;
  /** Where the link pages are on the page's server: "" gives /ABAPAY…, as the real one. */
  pagePath?: string;
  /** Links served from the start (more with POST /sim/payway/links). */
  links?: Partial<TwinLink>[];
}

export interface PaywayTwin {
  page: express.Router;
  api: express.Router;
  controls: express.Router;
  state: TwinState;
  store: TwinStore;
  /** What the twin's edge saw of its callers (GET /sim/payway/seen). */
  edge: TwinEdge;
  /** The path of a link's page on the page's server. */
  linkPath(code: string): string;
}

export function createPaywayTwin(options: PaywayTwinOptions): PaywayTwin {
  const clock = options.clock ?? Date.now;
  const store = new TwinStore(clock);
  const state = initialTwinState();
  const edge = new TwinEdge(clock);
  const pagePath = options.pagePath ?? "";
  for (const l of options.links ?? []) addLink(store, l);
  const page = express.Router();
  page.post(`${pagePath}/cdn-cgi/challenge-platform/h/b/jsd/r/:ray`, express.json({ limit: "4kb" }), (req, res) => {
    const known = edge.noteScript(String(req.params.ray), bodyRecord(req.body, []));
    res.status(known ? 204 : 404).end();
  });
  // The stylesheet of a link page with the `stylesheet` option (twin-page.ts): it shows the form.
  page.get(`${pagePath}/_nuxt/link.css`, (_req, res) => {
    res.set("cache-control", "no-store").type("text/css").send(TWIN_STYLESHEET);
  });
  page.get(`${pagePath}/:code`, (req, res) => {
    const code = String(req.params.code);
    const link = store.links.get(code);
    const challenged = state.fault.mode === "challenge" && headlessRequest(req);
    edge.notePage(req, code, challenged);
    if (challenged) return sendChallenge(res);
    if (
      state.fault.mode === "forbidden" &&
      (state.fault.address === null || state.fault.address === callerAddress(req))
    )
      return void res.status(403).type("html").send(cloudflareBlockPage());
    if (!/^ABAPAY/.test(code) || link === undefined)
      return void res.status(404).type("html").send(renderTwinNotice("Not found", "This payment link does not exist"));
    const origin = `${req.protocol}://${req.get("host") ?? ""}`;
    store.origins.add(origin);
    // A fault mode that changes every link's page (twin-layout.ts) applies to this visit: its page and its API call.
    const visit = store.visit({ ...link, ...state.fault.link }, paywayRequestTime(clock()));
    // Bot management on: the edge's detections run first in the page, reporting to the page's origin.
    const detections =
      state.fault.mode === "challenge"
        ? detectionScript(`cdn-cgi/challenge-platform/h/b/jsd/r/${edge.rayFor(visit.abaData, code)}`)
        : undefined;
    res
      .set("cache-control", "no-store")
      .cookie("__cf_bm", store.issueCookie("page"), { path: "/", httpOnly: true, sameSite: "lax", maxAge: 30 * 60_000 })
      .cookie("i18n_redirected", "en", { path: "/", sameSite: "lax", maxAge: 365 * 24 * 3600_000 })
      .type("html")
      .send(
        renderTwinPage({
          visit,
          apiOrigin: options.apiOrigin(),
          pollMs: options.pollIntervalMs ?? 3000,
          routePath: `${pagePath}/${code}`,
          prelude: detections ?? prelude(state),
        }),
      );
  });
  const api = twinApiRouter({ store, state, clock, makeQr: options.makeQr, edge });
  const controls = twinControls(store, state, clock);
  controls.get("/sim/payway/seen", (_req, res) => void res.json(edge.view()));
  return { page, api, controls, state, store, edge, linkPath: (code) => `${pagePath}/${code}` };
}

/** The page's extra script in a hostile-test mode. */
function prelude(state: TwinState): string | undefined {
  if (state.fault.mode === "hostile") return hostileScript();
  if (state.fault.mode === "webrtc") return webrtcScript(state.fault.udpPort);
  if (state.fault.mode === "embeds") return embedsScript(state.fault.origins);
  return undefined;
}

const LINK_CODE_RE = /^ABAPAY[A-Za-z0-9]{1,40}$/;

function addLink(store: TwinStore, l: Partial<TwinLink>): TwinLink {
  const currency: TwinCurrency = l.currency ?? "KHR";
  const link: TwinLink = {
    ...DEFAULT_LINK_OPTIONS,
    ...l,
    code: l.code ?? `ABAPAY${Math.random().toString(36).slice(2, 10).toUpperCase()}`,
    currency,
    title: l.title ?? "Payment",
    merchant: l.merchant ?? "Twin Shop",
    minAmount: l.minAmount ?? (currency === "USD" ? "0.01" : "100"),
    maxAmount: l.maxAmount ?? (currency === "USD" ? "10000" : "40000000"),
  };
  store.links.set(link.code, link);
  return link;
}

function twinControls(store: TwinStore, state: TwinState, clock: () => number): express.Router {
  const controls = express.Router();
  const json = express.json({ limit: "16kb" });
  const onClient = (apply: (c: TwinClient) => ControlOutcome) => (req: Request, res: Response) => {
    const details: FieldError[] = [];
    const body = bodyRecord(req.body, details);
    const id = typeof body.clientId === "string" ? body.clientId : "";
    const client = store.client(id);
    if (id === "") return sendControlError(res, "BAD_USER_INPUT", "invalid request", [...details, required]);
    if (client === undefined) return sendControlError(res, "NOT_FOUND", `no PayWay client ${id}`);
    const outcome = apply(client);
    if (!outcome.ok) return sendControlError(res, "CONFLICT", outcome.conflict);
    res.json(clientView(outcome.client));
  };
  controls.post(
    "/sim/link/scan",
    json,
    onClient((c) => store.scan(c)),
  );
  controls.post(
    "/sim/link/approve",
    json,
    onClient((c) => store.approve(c)),
  );
  controls.post(
    "/sim/link/decline",
    json,
    onClient((c) => store.decline(c)),
  );
  // Polls report a word public code does not show (lower-case letters, digits, '-' or '_'), until scan/approve/decline.
  controls.post("/sim/link/report", json, (req, res) => {
    const action = isRecordBody(req.body) ? req.body.action : undefined;
    if (typeof action !== "string" || !/^[a-z0-9_-]{1,40}$/.test(action))
      return sendControlError(res, "BAD_USER_INPUT", "invalid request", [
        { field: "action", message: "1-40 lower-case letters, digits, '-' or '_'" },
      ]);
    onClient((c) => store.report(c, action))(req, res);
  });
  // `status` (400–599, default 500): what its polls answer from now on.
  controls.post("/sim/link/break", json, (req, res) => {
    const status = isRecord(req.body) ? req.body.status : undefined;
    if (
      status !== undefined &&
      (typeof status !== "number" || !Number.isInteger(status) || status < 400 || status > 599)
    )
      return sendControlError(res, "BAD_USER_INPUT", "invalid request", [
        { field: "status", message: "an HTTP status from 400 to 599" },
      ]);
    onClient((c) => {
      c.broken = true;
      c.brokenStatus = typeof status === "number" ? status : 500;
      return { ok: true, client: c };
    })(req, res);
  });
  controls.get("/sim/link/clients/:clientId", (req, res) => {
    const client = store.client(String(req.params.clientId));
    if (client === undefined) return sendControlError(res, "NOT_FOUND", "no such PayWay client");
    res.json(clientView(client));
  });
  controls.post("/sim/payway/fault", json, twinFaultControl(state, clock));
  controls.post("/sim/payway/links", json, (req, res) => {
    const details: FieldError[] = [];
    const body = bodyRecord(req.body, details);
    const str = (k: string) => (typeof body[k] === "string" ? body[k] : undefined);
    const code = str("code");
    if (code !== undefined && !LINK_CODE_RE.test(code))
      details.push({ field: "code", message: "ABAPAY followed by 1-40 letters or digits" });
    if (body.currency !== undefined && body.currency !== "USD" && body.currency !== "KHR")
      details.push({ field: "currency", message: "USD or KHR" });
    const options = linkOptionsOf(body, details);
    if (details.length > 0) return sendControlError(res, "BAD_USER_INPUT", "invalid link", details);
    const input: Partial<TwinLink> = { ...options, currency: body.currency as TwinCurrency | undefined, code };
    for (const k of ["title", "merchant", "minAmount", "maxAmount"] as const) if (str(k)) input[k] = str(k);
    res.json(addLink(store, input));
  });
  controls.use(["/sim/link", "/sim/payway"], controlBodyErrors);
  return controls;
}

function isRecordBody(body: unknown): body is Record<string, unknown> {
  return typeof body === "object" && body !== null && !Array.isArray(body);
}

const required: FieldError = { field: "clientId", message: "is required and must be a non-empty string" };

function clientView(c: TwinClient) {
  const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());
  return {
    clientId: c.clientId,
    qr: c.qr,
    amount: c.amount,
    additionalFields: { ...c.additionalFields },
    currency: c.link.currency,
    link: c.link.code,
    action: c.action,
    broken: c.broken,
    polls: c.polls,
    deviceIds: [...c.deviceIds],
    reusedDeviceIds: c.reusedDeviceIds,
    pollTimes: c.pollTimes.map((ms) => new Date(ms).toISOString()),
    pollCookies: c.pollCookies,
    unknownAction: c.unknownAction,
    requestTime: c.requestTime,
    createdAt: iso(c.createdAt),
    scannedAt: iso(c.scannedAt),
    approvedAt: iso(c.approvedAt),
    declinedAt: iso(c.declinedAt),
    lastPollAt: iso(c.lastPollAt),
  };
}
