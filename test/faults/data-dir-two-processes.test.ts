import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_TOKEN, ARTIFACTS, freePort, ServiceProcess } from "../support/cluster.js";
import { adminOf } from "../support/traffic.js";
import { AUTH, createTenant, post, type Tenant } from "../support/app.js";
import { keepOutput } from "../support/child-output.js";
import { waitFor } from "../support/wait.js";
import type { DemoFile } from "../../src/demo/seed.js";

/**
 * `npm start` twice on one DATA_DIR (found as a new user would): the second process opened the same embedded
 * database, both expired the same transaction, the second rewrote demo.json, and once the first restarted
 * everything committed after the second had started was gone. Now the second is refused before it opens
 * anything, while the first keeps committing; after restarts of the first (a clean stop, then SIGKILL) every
 * transaction, key, link configuration and late payment committed is still there, as it was.
 */

const ENV = {
  HOST: "127.0.0.1",
  LOG_LEVEL: "warn",
  ADMIN_TOKEN,
  QR_MONITOR_INTERVAL_MS: "500",
  // A payment after expiry is looked for every second (5 min by default): the late SUCCESS comes within the test.
  QR_LATE_CHECK_INTERVAL_MS: "1000",
};

interface Issued {
  id: string;
  md5: string;
  key: string;
  paid: boolean;
}

/** A committed item as the service answers for it: a transaction's status, lateness and events. */
interface TxView {
  status: string;
  latePayment: boolean;
  events: { id: string; type: string }[];
}

describe("two processes on one data directory (the `npm start` default)", () => {
  let first: ServiceProcess;
  let demo: DemoFile;
  const admin = () => adminOf(first.url);

  beforeAll(async () => {
    const logDir = join(ARTIFACTS, `data-dir-two-processes-${new Date().toISOString().replace(/[:.]/g, "-")}`);
    mkdirSync(logDir, { recursive: true });
    first = new ServiceProcess("first", "serve", await freePort(), () => ENV, logDir);
    await first.start();
    demo = JSON.parse(readFileSync(join(first.dataDir, "demo.json"), "utf8")) as DemoFile;
  }, 180_000);
  afterAll(async () => first?.dispose());

  const issue = async (key: string, expiredAfter = 600_000): Promise<Issued> => {
    const g = await post(`${first.url}/qr/generate`, { amount: 1.25, currency: 840, expiredAfter }, AUTH.qr(key));
    expect(g.status).toBe(200);
    const body = g.body as { transactionId: string; data: { md5: string } };
    return { id: body.transactionId, md5: body.data.md5, key, paid: false };
  };
  const pay = async (tx: Issued) => {
    expect((await post(`${first.url}/sim/network/pay`, { md5: tx.md5 })).status).toBe(200);
    tx.paid = true;
  };
  const view = async (id: string) =>
    (
      await admin().admin<{ transaction: TxView | null }>(
        `query($id: ID!) { transaction(id: $id) { status latePayment events { id type } } }`,
        { id },
      )
    ).transaction;
  const configOf = async (t: Tenant) => {
    const q = `query($m: ID!) { apiKeys(merchantId: $m) { id } linkConfigs(merchantId: $m) { id } }`;
    const r = await admin().admin<{ apiKeys: { id: string }[]; linkConfigs: { id: string }[] }>(q, { m: t.merchantId });
    return { keys: r.apiKeys.map((k) => k.id).sort(), links: r.linkConfigs.map((l) => l.id) };
  };

  it("refuses the second process while the first commits; restarts of the first lose nothing committed", async () => {
    try {
      const txs: Issued[] = [];
      // Before: a QR that will expire and then be paid late, a tenant (keys, link configuration), QRs.
      const late = await issue(demo.keys.qr, 10_000);
      const tenants = [await createTenant(admin(), { name: "Before Shop" })];
      for (let i = 0; i < 4; i++) txs.push(await issue(i % 2 ? demo.keys.qr : tenants[0].keys.qr));
      await pay(txs[0]);
      await pay(txs[1]);
      const demoJson = readFileSync(join(first.dataDir, "demo.json"), "utf8");

      // Two more `npm start`s on the same DATA_DIR while the first keeps committing.
      const startedAt = Date.now();
      const seconds = [0, 1].map(() => secondStart(first.dataDir));
      let during = 0;
      let settled = false;
      void Promise.all(seconds).then(() => (settled = true));
      while (!settled || during < 3) {
        const tx = await issue(tenants[0].keys.qr);
        txs.push(tx);
        if (during++ % 2 === 0) await pay(tx);
      }
      const refusals = await Promise.all(seconds);
      const refusedMs = Date.now() - startedAt;
      for (const r of refusals) {
        expect(r.code).toBe(1);
        expect(r.lines).toEqual([
          expect.stringMatching(new RegExp(`^Start-up failed: DATA_DIR .* is in use by process ${first.pid} `)),
        ]);
      }
      expect(readFileSync(join(first.dataDir, "demo.json"), "utf8")).toBe(demoJson);

      // After: the late payment, another tenant, more QRs.
      await waitFor(async () => (await view(late.id))?.status === "EXPIRED", 60_000, 250, "the short QR's expiry");
      await pay(late);
      tenants.push(await createTenant(admin(), { name: "After Shop" }));
      for (let i = 0; i < 3; i++) txs.push(await issue(tenants[1].keys.qr));
      await pay(txs[txs.length - 1]);
      const all = [...txs, late];
      // Every paid QR reaches SUCCESS (the late one flagged), the others stay PENDING: the state to keep.
      await waitFor(
        async () => {
          for (const tx of all) if ((await view(tx.id))?.status !== (tx.paid ? "SUCCESS" : "PENDING")) return false;
          return true;
        },
        60_000,
        250,
        "every paid QR at SUCCESS",
      );
      expect((await view(late.id))?.latePayment).toBe(true);
      const committed = new Map<string, TxView | null>();
      for (const tx of all) committed.set(tx.id, await view(tx.id));
      const configs = await Promise.all(tenants.map(configOf));

      const lost = async () => {
        const missing: string[] = [];
        for (const [id, before] of committed)
          if (JSON.stringify(await view(id)) !== JSON.stringify(before)) missing.push(id);
        const now = await Promise.all(tenants.map(configOf));
        if (JSON.stringify(now) !== JSON.stringify(configs)) missing.push("keys or link configurations");
        for (const t of tenants) {
          const g = await post(`${first.url}/qr/verify`, { qrData: "x" }, AUTH.qr(t.keys.qr));
          if (g.status !== 200) missing.push(`key of ${t.name}`);
        }
        return missing;
      };
      // A clean restart, then a crash (SIGKILL: the lock stays behind, and the next start takes it over).
      await first.stop();
      await first.start();
      expect(await lost()).toEqual([]);
      await first.kill9();
      await first.start();
      // A monitor round or two after the start: nothing it does may undo a committed state.
      await new Promise((r) => setTimeout(r, 3_000));
      expect(await lost()).toEqual([]);
      expect((JSON.parse(readFileSync(join(first.dataDir, "demo.json"), "utf8")) as DemoFile).keys).toEqual(demo.keys);
      console.log(
        `two processes on one DATA_DIR: ${JSON.stringify({
          refusedMs,
          committedWhileRefusing: during,
          transactions: committed.size,
          apiKeys: configs.reduce((n, c) => n + c.keys.length, 0),
          linkConfigs: configs.reduce((n, c) => n + c.links.length, 0),
          lost: 0,
        })}`,
      );
    } catch (err) {
      if (err instanceof Error) err.message += `\n--- the first process's log:\n${first.tail(60)}`;
      throw err;
    }
  }, 300_000);
});

/** `node dist/src/main.js serve` on `dataDir` (its own port), until it exits (killed after 60 s). */
async function secondStart(dataDir: string): Promise<{ code: number | null; lines: string[] }> {
  const child = spawn(process.execPath, ["dist/src/main.js", "serve"], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      ...ENV,
      PORT: String(await freePort()),
      DATA_DIR: dataDir,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = keepOutput(child);
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const code = await new Promise<number | null>((r) => child.once("exit", r));
  clearTimeout(timer);
  return {
    code,
    lines: output()
      .split("\n")
      .filter((l) => l.trim() !== ""),
  };
}
