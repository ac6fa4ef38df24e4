import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { startTestApp, createTenant, post, AUTH, type TestApp, type Tenant } from "../support/app.js";
import { linkModule } from "../../src/gateway-link/index.js";
import { waitFor } from "../support/wait.js";

type LinkTx = { transactionId: string; status: string; receiptUrl?: string; data: { clientId: string } };

/** Another site on this machine that records every request (and WebSocket upgrade) it gets. */
async function countingSite(): Promise<{ origin: string; hits: string[]; server: Server }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(`${req.method ?? "?"} ${req.url ?? ""}`);
    res.setHeader("access-control-allow-origin", "*");
    res.end(req.url?.endsWith(".js") ? "void 0;" : "ok");
  });
  server.on("upgrade", (req, socket) => {
    hits.push(`UPGRADE ${req.url ?? ""}`);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, server };
}

describe("the browser and what it reads (issue 16, finding 4)", () => {
  let t: TestApp;
  let tenant: Tenant;
  let foreign: Awaited<ReturnType<typeof countingSite>>;
  let allowed: Awaited<ReturnType<typeof countingSite>>;
  const saved = { ...process.env };
  beforeAll(async () => {
    foreign = await countingSite();
    allowed = await countingSite();
    // Secrets as a real deployment has them in its environment.
    process.env.SECRET_KEY = "env-secret-key-0123456789-0123456789-xyz";
    process.env.ADMIN_TOKEN = "env-admin-token-Zp4Qw8Lk2Nx7Rt5Vb9Hc3Jd6";
    process.env.DATABASE_URL = "postgresql://user:secret-password@db/pqr";
    t = await startTestApp({ LINK_ALLOWED_ORIGINS: `${allowed.origin}, https://cdn.example.com` });
    tenant = await createTenant(t);
  });
  afterAll(async () => {
    process.env = saved;
    await t?.stop();
    for (const site of [foreign, allowed]) {
      site?.server.closeAllConnections();
      site?.server.close();
    }
  });

  const pay = async (): Promise<LinkTx> => {
    const g = await post(
      `${t.url}/gateway-link/generate-qr`,
      { amount: 1000, currency: 116 },
      AUTH.gatewayLink(tenant.keys.gatewayLink),
    );
    expect(g.status).toBe(200);
    const b = g.body as LinkTx;
    expect((await post(`${t.url}/sim/link/approve`, { clientId: b.data.clientId })).status).toBe(200);
    return waitFor(async () => {
      const r = (
        await post(
          `${t.url}/gateway-link/check`,
          { transactionId: b.transactionId },
          AUTH.gatewayLink(tenant.keys.gatewayLink),
        )
      ).body as LinkTx;
      return r.status === "SUCCESS" ? r : null;
    }, 20_000);
  };

  it("Chromium runs without the service's secrets in its environment", async () => {
    await pay(); // the browser is launched by the first page
    const pid = t.app.module(linkModule).pool.stats().pid;
    expect(pid).not.toBeNull();
    const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
    const names = environ.map((l) => l.split("=")[0]);
    for (const secret of ["SECRET_KEY", "ADMIN_TOKEN", "DATABASE_URL"]) expect(names).not.toContain(secret);
    expect(environ.join("\n")).not.toContain("secret-password");
  });

  it("the page loads only its own origin and the allowlisted ones; the payment still completes", async () => {
    // The page pulls in both sites: a script, an iframe, a fetch, a beacon, a WebSocket and a worker's fetch each.
    const embeds = { mode: "embeds", origins: [foreign.origin, allowed.origin] };
    expect((await post(`${t.url}/sim/payway/fault`, embeds)).status).toBe(200);
    try {
      const done = await pay();
      expect(done.status).toBe("SUCCESS");
      // The allowlisted site got every kind of request (so the page did try), the other one none.
      const kinds = ["GET /script.js", "GET /frame", "GET /fetch", "POST /beacon", "UPGRADE /ws", "GET /worker"];
      await waitFor(async () => (kinds.every((k) => allowed.hits.includes(k)) ? true : null), 10_000);
      expect(foreign.hits).toEqual([]);
    } finally {
      await post(`${t.url}/sim/payway/fault`, { mode: "ok" });
    }
  });
});
