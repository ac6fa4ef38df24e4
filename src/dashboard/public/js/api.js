// The dashboard's only way to the service: GraphQL over HTTP, subscriptions over graphql-ws, and the simulators' controls.
import { createClient } from "../vendor/graphql-ws/client.js";

const TOKEN_KEY = "pqr.adminToken";

/** The admin token lives in this tab's sessionStorage only: never in the URL, gone when the tab closes. */
export const session = {
  get token() {
    return sessionStorage.getItem(TOKEN_KEY);
  },
  signIn(token) {
    sessionStorage.setItem(TOKEN_KEY, token);
    window.dispatchEvent(new CustomEvent("pqr:session"));
  },
  signOut() {
    sessionStorage.removeItem(TOKEN_KEY);
    closeLive();
    window.dispatchEvent(new CustomEvent("pqr:session"));
  },
};

export class ApiError extends Error {
  constructor(message, code = "INTERNAL", details = []) {
    super(message);
    this.code = code;
    this.details = details;
  }
}

/** Runs one GraphQL operation with the admin token (or `token`); throws ApiError with the service's code and field details. */
export async function gql(query, variables = {}, token = session.token) {
  let res;
  try {
    res = await fetch("/graphql", {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
  } catch {
    throw new ApiError("The service cannot be reached", "UPSTREAM_UNAVAILABLE");
  }
  const body = await res.json().catch(() => null);
  if (body === null) throw new ApiError(`Unexpected answer (HTTP ${res.status})`);
  const e = body.errors?.[0];
  if (e) {
    const err = new ApiError(e.message, e.extensions?.code, e.extensions?.details ?? []);
    // The stored token stopped working (rotated on the server): back to the sign-in form.
    if (err.code === "UNAUTHENTICATED" && token === session.token) session.signOut();
    throw err;
  }
  return body.data;
}

let client = null;
let connectionState = "offline";
const connectionListeners = new Set();

function setConnection(state) {
  connectionState = state;
  connectionListeners.forEach((l) => l(state));
}

function live() {
  if (client !== null) return client;
  const url = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/graphql`;
  client = createClient({
    url,
    lazy: true,
    connectionParams: () => ({ authorization: `Bearer ${session.token}` }),
    retryAttempts: 1000,
    shouldRetry: () => session.token !== null,
    keepAlive: 15_000,
  });
  client.on("connected", () => setConnection("live"));
  client.on("closed", () => setConnection("offline"));
  client.on("connecting", () => setConnection("connecting"));
  return client;
}

/** Follows connection state ("connecting", "live", "offline"), starting with the current one; returns the unsubscribe function. */
export function onConnection(listener) {
  connectionListeners.add(listener);
  listener(connectionState);
  return () => connectionListeners.delete(listener);
}

/** Starts a subscription; `sink.next(data)` per event. Returns a function that stops it. */
export function subscribe(query, variables, sink) {
  return live().subscribe(
    { query, variables },
    {
      next: (r) =>
        r.errors ? sink.error?.(new ApiError(r.errors[0].message, r.errors[0].extensions?.code)) : sink.next(r.data),
      error: (e) => sink.error?.(e instanceof Error ? e : new ApiError("The live connection was refused")),
      complete: () => sink.complete?.(),
    },
  );
}

export function closeLive() {
  client?.dispose();
  client = null;
  connectionState = "offline";
}

let config = null;

/** What the server lets the dashboard know: are the simulators mounted (demo mode)? */
export function dashboardConfig() {
  config ??= fetch("/dashboard/config.json")
    .then((r) => r.json())
    .catch(() => ({ simulators: false }));
  return config;
}

/** Plays the payer or the upstream through a simulator control (demo mode only). */
export async function sim(path, body) {
  const res = await fetch(`/sim/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(json.error?.message ?? `Simulator answered HTTP ${res.status}`, json.error?.code);
  return json;
}
