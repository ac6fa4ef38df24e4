import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { once } from "node:events";
import WebSocket from "ws";
import { startTestApp, createTenant, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { INIT_WAIT_MS } from "../../src/graphql/init-wait.js";

/** A raw graphql-transport-ws socket: the first thing the server sends, or how it closed. */
async function openRaw(t: TestApp): Promise<{ ws: WebSocket; first: Promise<unknown> }> {
  const ws = new WebSocket(`${t.url.replace(/^http/, "ws")}/graphql`, "graphql-transport-ws");
  const first = new Promise((resolve) => {
    ws.once("message", (data: Buffer) => resolve(JSON.parse(data.toString("utf8"))));
    ws.once("close", (code, reason) => resolve({ closed: code, reason: reason.toString() }));
  });
  await once(ws, "open");
  return { ws, first };
}

describe("the wait for connection_init on /graphql", () => {
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await startTestApp();
    tenant = await createTenant(t);
  });
  afterAll(async () => t?.stop());

  // Found while explaining the 4408s of the lifecycle bench on a busy machine. The service runs in this process, so
  // holding this process's event loop past the wait is the starved service.
  it("acknowledges a client that sent connection_init at once, even when the service could not read it within the wait", async () => {
    const { ws, first } = await openRaw(t);
    ws.send(JSON.stringify({ type: "connection_init", payload: AUTH.qr(tenant.keys.qr) }));
    const until = Date.now() + INIT_WAIT_MS + 500;
    while (Date.now() < until) {
      // Busy: nothing else in this process runs meanwhile, the service's timers included.
    }
    expect(await first).toEqual({ type: "connection_ack" });
    ws.close(1000);
  });

  it("still closes a socket that never sends connection_init (4408)", async () => {
    const { first } = await openRaw(t);
    expect(await first).toEqual({ closed: 4408, reason: "Connection initialisation timeout" });
  });
});
