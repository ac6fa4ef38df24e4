// Chromium specifics behind the browser pool: how it is launched and stopped, and how a page's
// requests are held and decided inside Chromium (which it never needs, which origins it may reach,
// and the answers its owner reads).

import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, CDPSession, Protocol } from "puppeteer-core";
import {
  ANSWER_MAX_BYTES,
  decodedHeaders,
  DOCUMENT_MAX_BYTES,
  fulfillWith,
  readCappedBody,
  refuseRequest,
  sizeName,
} from "./answer-body.js";

/** Always passed. The sandbox flag is not among them: see chooseSandbox(). */
export const DEFAULT_CHROMIUM_ARGS: readonly string[] = [
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-dev-shm-usage",
  "--disable-quic",
  // WebRTC's sockets pass neither the Fetch domain nor the connect-src policy (interceptRequests): a page's
  // RTCPeerConnection would send UDP (STUN, TURN) to any address and port, loopback included. This policy allows
  // no UDP that does not go through a proxy. Hidden targets do not apply it (their renderers miss the profile's
  // WebRTC preferences: measured), so every link page also runs without RTCPeerConnection (withoutWebRtc()).
  "--webrtc-ip-handling-policy=disable_non_proxied_udp",
  // Chromium 156 preloads a WebUI omnibox popup (a ~48 MB renderer) for every browser context;
  // a monitor never types in an omnibox. The spare renderer Chromium keeps ready is started for one
  // browser context and wasted when the next page is in another (each payment's is its own): ~30 ms
  // of CPU per page for nothing. Puppeteer merges this with its own --disable-features.
  "--disable-features=WebUIOmniboxPopup,WebUIOmniboxFullPopup,WebUIOmniboxAimPopup,SpareRendererForSitePerProcess",
  // Puppeteer launches with --enable-automation, which makes navigator.webdriver true in every page: the first thing
  // a bot check reads (Cloudflare's among them). Without this Blink feature it is false, as in a browser a person
  // runs; the DevTools protocol the pool drives pages with is unaffected (decision 0197).
  "--disable-blink-features=AutomationControlled",
];

/** CHROMIUM_SANDBOX: `auto` uses the sandbox where it can work, `on` always asks for it, `off` never does. */
export type SandboxMode = "auto" | "on" | "off";

/** What decides whether Chromium's sandbox can run here. */
export interface SandboxSituation {
  /** This process runs as uid 0: Chromium refuses to start sandboxed as root. */
  root: boolean;
  /** An unprivileged process may create a user namespace (what Chromium's namespace sandbox needs). */
  userNamespaces: boolean;
}

export interface SandboxChoice {
  sandboxed: boolean;
  /** Flags for Chromium: `--no-sandbox` or nothing. */
  args: string[];
  /** One line for the start-up log. */
  reason: string;
}

/** The launch flags for a situation (pure; detectSandboxSituation() reads the real one). */
export function chooseSandbox(situation: SandboxSituation, mode: SandboxMode = "auto"): SandboxChoice {
  if (mode === "on")
    return { sandboxed: true, args: [], reason: "Chromium runs with its sandbox (CHROMIUM_SANDBOX=on)" };
  const without = (why: string): SandboxChoice => ({
    sandboxed: false,
    args: ["--no-sandbox"],
    reason: `Chromium runs WITHOUT its sandbox: ${why}`,
  });
  if (mode === "off") return without("CHROMIUM_SANDBOX=off");
  if (situation.root)
    return without(
      "this process runs as root, where Chromium refuses its sandbox; run the service as a non-root user " +
        "with unprivileged user namespaces (see docs/security.md, The browser)",
    );
  if (!situation.userNamespaces)
    return without(
      "unprivileged user namespaces are not available (kernel setting, or a container's seccomp/AppArmor " +
        "profile); see docs/security.md, The browser",
    );
  return { sandboxed: true, args: [], reason: "Chromium runs with its sandbox (non-root, user namespaces available)" };
}

/** Reads this machine's situation: the uid, the kernel's user-namespace switches, and one real attempt. */
export function detectSandboxSituation(): SandboxSituation {
  const root = process.getuid?.() === 0;
  const sysctl = (path: string): string | null => {
    try {
      return readFileSync(path, "utf8").trim();
    } catch {
      return null;
    }
  };
  let userNamespaces =
    sysctl("/proc/sys/kernel/unprivileged_userns_clone") !== "0" &&
    sysctl("/proc/sys/user/max_user_namespaces") !== "0" &&
    sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") !== "1";
  if (userNamespaces && !root) {
    // A seccomp profile (Docker's default) refuses the clone without any sysctl saying so: try it.
    const probe = spawnSync("unshare", ["--user", "true"], { timeout: 5_000, stdio: "ignore" });
    if (!(probe.error && "code" in probe.error && probe.error.code === "ENOENT")) userNamespaces = probe.status === 0;
  }
  return { root, userNamespaces };
}

let detected: SandboxChoice | null = null;
/** chooseSandbox() for this machine in `auto` mode, detected once per process. */
export function sandboxForThisMachine(): SandboxChoice {
  detected ??= chooseSandbox(detectSandboxSituation());
  return detected;
}

export type BlockedResourceType = "Image" | "Font" | "Media" | "Stylesheet" | "TextTrack" | "Manifest";
/**
 * Stylesheets load: a page that hides its form until its styles say otherwise, or shows Continue only once styled,
 * needs them to be driven as a visitor sees it, and a page fetched without its styles is one more sign of a bot
 * (decision 0198).
 */
const DEFAULT_BLOCKED: readonly BlockedResourceType[] = ["Image", "Font", "Media"];

export interface LaunchedChromium {
  browser: Browser;
  pid: number | null;
  /** A fresh profile directory, removed with removeProfile() when the browser is gone. */
  userDataDir: string;
}

export async function launchChromium(
  executablePath: string,
  extraArgs: readonly string[],
  timeoutMs: number,
  sandboxArgs: readonly string[] = sandboxForThisMachine().args,
): Promise<LaunchedChromium> {
  const userDataDir = await mkdtemp(join(tmpdir(), "pqr-chromium-"));
  try {
    // Loaded on the first launch, not at start-up: a service that never opens a page never pays for the module.
    const { default: puppeteer } = await import("puppeteer-core");
    const browser = await puppeteer.launch({
      executablePath,
      headless: true,
      userDataDir,
      // A pipe, not a WebSocket: Chromium exits by itself when this process dies, even by SIGKILL.
      pipe: true,
      // The application owns shutdown (BrowserPool.close()); puppeteer must not trap signals.
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
      timeout: timeoutMs,
      args: [...DEFAULT_CHROMIUM_ARGS, ...sandboxArgs, ...extraArgs],
      // Third-party pages run in this process tree: it gets no secret (SECRET_KEY, ADMIN_TOKEN, DATABASE_URL…).
      env: chromiumEnv(process.env),
    });
    return { browser, pid: browser.process()?.pid ?? null, userDataDir };
  } catch (err) {
    await removeProfile(userDataDir);
    throw err;
  }
}

/** The only variables Chromium is started with: what it needs to run, nothing of the service's own. */
export function chromiumEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const keep = ["PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TZ", "XDG_RUNTIME_DIR", "FONTCONFIG_PATH"];
  const out: Record<string, string> = {};
  for (const k of keep) if (env[k] !== undefined) out[k] = env[k] as string;
  return out;
}

/** Puppeteer starts Chromium as a process-group leader; this reaches helpers that outlived it. */
export function killProcessGroup(pid: number | null): void {
  if (pid === null) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // ESRCH: the whole group is already gone.
  }
}

/** Retries: helpers killed a moment ago may still be writing into the profile (ENOTEMPTY). */
export function removeProfile(userDataDir: string): Promise<void> {
  return rm(userDataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }).catch(() => undefined);
}

/** An XHR/fetch answer of a page, read while Chromium held it (Fetch domain, response stage). */
export interface PageResponse {
  url: string;
  /** HTTP status, or null when the request failed on the network (then `errorText` says how). */
  status: number | null;
  /** The answer's headers, names in lower case (empty when it failed on the network). */
  headers: Record<string, string>;
  errorText: string | null;
  /** The body as text; null when it could not be read. */
  body: string | null;
  /** What the page sent: its body and headers as Chromium shows them (cookies are not among them). */
  request: PageRequest;
}

export interface PageRequest {
  postData: string | null;
  headers: Record<string, string>;
}

/** The main document's answer: its status and headers, and the start of its body when it is an error page. */
export interface DocumentAnswer {
  status: number;
  /** Names in lower case. */
  headers: Record<string, string>;
  /** The first DOCUMENT_ERROR_TEXT bytes of an error answer (status 400 and up) as text; else null. */
  body: string | null;
}

/** How much of an error document is kept: enough to tell a Cloudflare page from the API's own refusal. */
const DOCUMENT_ERROR_TEXT = 8 * 1024;

/** What the page's owner is told of its traffic (only the top-level page's, not its frames' or workers'). */
export interface PageHooks {
  /** The main document's first final answer (not a redirect), or how it failed. */
  onDocument(outcome: DocumentAnswer | { error: string }): void;
  /** Whether the owner wants this XHR/fetch answer; only wanted bodies are read. */
  wants(url: string): boolean;
  onResponse(response: PageResponse): void;
}

/**
 * Holds a page's requests inside Chromium (CDP Fetch) and decides each: the unneeded resource types and
 * (when `allowedOrigins` is given) every request to an origin not in it fail; the main document's answer and
 * the XHR/fetch answers the hooks want are read at the response stage, so the page's traffic is known
 * without the Network domain's event stream. Must run while the target waits for the debugger, before its
 * first request. Child targets of the page (out-of-process iframes, workers) are attached paused and get the
 * same rule before they run, so a foreign iframe or a worker cannot reach another origin either.
 */
export async function interceptRequests(
  cdp: CDPSession,
  types: readonly BlockedResourceType[] = DEFAULT_BLOCKED,
  allowedOrigins?: ReadonlySet<string>,
  page?: { frameId: string; hooks: PageHooks; clientHints?: Readonly<Record<string, string>> },
  proxyAuth?: ProxyCredentials,
): Promise<void> {
  await withoutWebRtc(cdp);
  const blocked = new Set<string>(types);
  const csp = allowedOrigins === undefined ? null : connectPolicy(allowedOrigins);
  const mainDocument = (event: Protocol.Fetch.RequestPausedEvent): boolean =>
    page !== undefined && event.resourceType === "Document" && event.frameId === page.frameId;
  const go = (requestId: string): void => void cdp.send("Fetch.continueRequest", { requestId }).catch(() => undefined);
  cdp.on("Fetch.requestPaused", (event) => {
    const { requestId, resourceType } = event;
    const status = event.responseStatusCode;
    if (status !== undefined || event.responseErrorReason !== undefined) {
      const main = mainDocument(event);
      if (main && event.responseErrorReason !== undefined) page?.hooks.onDocument({ error: event.responseErrorReason });
      // The document's final answer is told once its body is read (an error page's start is part of what is told).
      const told = (body: Buffer | null): void => {
        if (!main || status === undefined || (status >= 300 && status < 400)) return;
        const text = status >= 400 && body !== null ? body.subarray(0, DOCUMENT_ERROR_TEXT).toString("utf8") : null;
        page?.hooks.onDocument({ status, headers: headerRecord(event.responseHeaders), body: text });
      };
      if (csp !== null && (resourceType === "Document" || resourceType === "Other")) {
        void addPolicy(cdp, event, csp).then(told);
      } else if (
        page &&
        (resourceType === "XHR" || resourceType === "Fetch") &&
        // A cross-origin API's CORS preflight shares the call's URL; only the call itself is the page's answer.
        event.request.method !== "OPTIONS" &&
        page.hooks.wants(event.request.url)
      ) {
        // The owner hears the answer before the page does (a poll of page-poll.ts waits on it after its fetch).
        void readAnswer(cdp, event).then(({ response, finish }) => {
          page.hooks.onResponse(response);
          void finish();
        });
        told(null);
      } else {
        go(requestId);
        told(null);
      }
      return;
    }
    const refuse =
      blocked.has(resourceType) ||
      /\/favicon\.ico(?:$|\?)/.test(event.request.url) ||
      (allowedOrigins !== undefined && !originAllowed(event.request.url, allowedOrigins));
    if (!refuse && mainDocument(event) && page?.clientHints !== undefined) {
      // The document's client hints said as the page's user agent does (browser-identity.ts clientHintHeaders).
      const headers = withHints(event.request.headers, page.clientHints);
      return void cdp.send("Fetch.continueRequest", { requestId, headers }).catch(() => undefined);
    }
    if (!refuse) return go(requestId);
    cdp.send("Fetch.failRequest", { requestId, errorReason: "BlockedByClient" }).catch(() => undefined);
    if (mainDocument(event)) page?.hooks.onDocument({ error: "BlockedByClient" });
  });
  const patterns: Protocol.Fetch.RequestPattern[] = [];
  // The main document's answer, and (with an origin list) every document and worker script's, to carry the
  // connect-src policy ("Other"); the page's API answers when someone reads them.
  patterns.push({ urlPattern: "*", resourceType: "Document", requestStage: "Response" });
  if (csp !== null) patterns.push({ urlPattern: "*", resourceType: "Other", requestStage: "Response" });
  if (page) {
    patterns.push({ urlPattern: "*", resourceType: "XHR", requestStage: "Response" });
    patterns.push({ urlPattern: "*", resourceType: "Fetch", requestStage: "Response" });
  }
  if (allowedOrigins === undefined) {
    for (const resourceType of types) patterns.push({ urlPattern: "*", resourceType, requestStage: "Request" });
    // The browser's own favicon fetch is typed "Other"; it is one wasted request per page.
    patterns.push({ urlPattern: "*/favicon.ico", resourceType: "Other", requestStage: "Request" });
    // The main document's request, to carry the page's client hints.
    if (page?.clientHints !== undefined)
      patterns.push({ urlPattern: "*", resourceType: "Document", requestStage: "Request" });
  } else {
    patterns.push({ urlPattern: "*", requestStage: "Request" });
  }
  if (proxyAuth !== undefined) answerProxyAuth(cdp, proxyAuth);
  await cdp.send("Fetch.enable", { patterns, handleAuthRequests: proxyAuth !== undefined });
  if (allowedOrigins === undefined) return;
  // Out-of-process iframes, dedicated and shared workers: each is its own target with its own requests.
  cdp.on("Target.attachedToTarget", (event) => {
    const child = cdp.connection()?.session(event.sessionId);
    if (!child) return;
    void interceptRequests(child, types, allowedOrigins, undefined, proxyAuth)
      .catch(() => undefined)
      .finally(() => void child.send("Runtime.runIfWaitingForDebugger").catch(() => undefined));
  });
  await cdp.send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: true, flatten: true });
}

/**
 * Removes RTCPeerConnection from every document of a target before its scripts run (each frame's window, an
 * about:blank iframe's too, read at once by its parent), so no page script can open a WebRTC socket, UDP or TCP.
 * A worker target has no Page domain and no RTCPeerConnection: nothing to do there.
 */
async function withoutWebRtc(cdp: CDPSession): Promise<void> {
  const source = "delete window.RTCPeerConnection; delete window.webkitRTCPeerConnection;";
  await cdp.send("Page.addScriptToEvaluateOnNewDocument", { source, runImmediately: true }).catch(() => undefined);
}

export interface ProxyCredentials {
  username: string;
  password: string;
}

/** The proxy's own challenge gets LINK_PROXY's credentials; a site's challenge is never answered. */
function answerProxyAuth(cdp: CDPSession, credentials: ProxyCredentials): void {
  cdp.on("Fetch.authRequired", (event) => {
    const authChallengeResponse =
      event.authChallenge.source === "Proxy"
        ? { response: "ProvideCredentials" as const, ...credentials }
        : { response: "CancelAuth" as const };
    void cdp.send("Fetch.continueWithAuth", { requestId: event.requestId, authChallengeResponse }).catch(() => {});
  });
}

/**
 * Chromium's flags for an outbound proxy (LINK_PROXY, `http(s)://[user:pass@]host:port`): every request of its
 * pages through it, loopback ones too (Chromium bypasses a proxy for loopback unless told otherwise); the
 * credentials, which Chromium cannot take as a flag, are answered per page (interceptRequests).
 */
export function proxyArgs(proxyUrl: string): { args: string[]; credentials: ProxyCredentials | undefined } {
  const u = new URL(proxyUrl);
  const credentials =
    u.username === ""
      ? undefined
      : { username: decodeURIComponent(u.username), password: decodeURIComponent(u.password) };
  return { args: [`--proxy-server=${u.protocol}//${u.host}`, "--proxy-bypass-list=<-loopback>"], credentials };
}

/**
 * A held XHR/fetch answer, read up to ANSWER_MAX_BYTES (answer-body.ts), and how to let the page have it: the body
 * read is handed back to the page; an answer over the cap is failed (the page sees a network error) and reported
 * with no body and `errorText` naming the cap.
 */
async function readAnswer(
  cdp: CDPSession,
  event: Protocol.Fetch.RequestPausedEvent,
): Promise<{ response: PageResponse; finish: () => Promise<unknown> }> {
  const url = event.request.url;
  const request: PageRequest = { postData: event.request.postData ?? null, headers: event.request.headers };
  const headers = headerRecord(event.responseHeaders);
  const go = () => cdp.send("Fetch.continueRequest", { requestId: event.requestId }).catch(() => undefined);
  if (event.responseErrorReason !== undefined)
    return {
      response: {
        url,
        status: null,
        headers,
        errorText: `net::ERR_${event.responseErrorReason}`,
        body: null,
        request,
      },
      finish: go,
    };
  const status = event.responseStatusCode ?? null;
  try {
    const read = await readCappedBody(cdp, event.requestId, ANSWER_MAX_BYTES);
    if (!read.ok)
      return {
        response: {
          url,
          status,
          headers,
          errorText: `the answer is larger than ${sizeName(ANSWER_MAX_BYTES)} (refused unread)`,
          body: null,
          request,
        },
        finish: () => refuseRequest(cdp, event.requestId),
      };
    const body = read.body;
    return {
      response: { url, status, headers, errorText: null, body: body.toString("utf8"), request },
      finish: () => fulfillWith(cdp, event, body).catch(() => refuseRequest(cdp, event.requestId)),
    };
  } catch {
    // The body could not be read (a redirect has none; or the request went away): let it go on, or fail it when
    // its body was taken already and it cannot.
    const onward = () =>
      cdp
        .send("Fetch.continueRequest", { requestId: event.requestId })
        .catch(() => refuseRequest(cdp, event.requestId));
    return { response: { url, status, headers, errorText: null, body: null, request }, finish: onward };
  }
}

/**
 * WebSocket handshakes never reach the Fetch domain, so request interception alone cannot stop them. A
 * Content-Security-Policy `connect-src` added to every document and worker script can: fetch, XHR, beacons,
 * EventSource and WebSockets then reach only the allowed origins. A page's own policy still applies too
 * (several policies are all enforced), so this only ever narrows what the page may do.
 */
function connectPolicy(allowedOrigins: ReadonlySet<string>): string {
  const sources = [...allowedOrigins].flatMap((origin) => {
    const url = new URL(origin);
    return [origin, `${url.protocol === "https:" ? "wss" : "ws"}://${url.host}`];
  });
  return `connect-src ${sources.join(" ")}`;
}

/** Adds the policy to a document's answer; resolves with the body it read (null when it read none). */
async function addPolicy(
  cdp: CDPSession,
  event: Protocol.Fetch.RequestPausedEvent,
  csp: string,
): Promise<Buffer | null> {
  const status = event.responseStatusCode;
  try {
    // A redirect's next request is checked like any other; an error has no document to protect.
    if (status === undefined || (status >= 300 && status < 400)) {
      await cdp.send("Fetch.continueRequest", { requestId: event.requestId });
      return null;
    }
    // Read as a stream up to a cap: a document larger than any payment page is failed unread.
    const read = await readCappedBody(cdp, event.requestId, DOCUMENT_MAX_BYTES);
    if (!read.ok) throw new Error(`document larger than ${sizeName(DOCUMENT_MAX_BYTES)}`);
    // The body comes back decoded: its length and encoding headers no longer apply.
    const headers = decodedHeaders(event);
    headers.push({ name: "Content-Security-Policy", value: csp });
    await fulfillWith(cdp, event, read.body, headers);
    return read.body;
  } catch {
    // Without the policy the document does not load (fail closed).
    await refuseRequest(cdp, event.requestId);
    return null;
  }
}

/** A request's headers with those `hints` names replaced by its values (only those the request carries). */
function withHints(
  headers: Protocol.Network.Headers,
  hints: Readonly<Record<string, string>>,
): Protocol.Fetch.HeaderEntry[] {
  return Object.entries(headers).map(([name, value]) => ({ name, value: hints[name.toLowerCase()] ?? String(value) }));
}

/** CDP's header list as a record, names in lower case (a repeated header's values joined as HTTP joins them). */
function headerRecord(list: readonly Protocol.Fetch.HeaderEntry[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { name, value } of list ?? []) {
    const key = name.toLowerCase();
    out[key] = key in out ? `${out[key]}, ${value}` : value;
  }
  return out;
}

/** data: and about: never reach the network; blob: URLs carry the origin that made them. */
function originAllowed(raw: string, allowed: ReadonlySet<string>): boolean {
  try {
    const url = new URL(raw);
    return url.protocol === "data:" || url.protocol === "about:" || allowed.has(url.origin);
  } catch {
    return false;
  }
}
