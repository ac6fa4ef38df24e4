// Runs the payment-link simulator as a real HTTP server on 127.0.0.1 (an ephemeral port), the
// way the application mounts it, for tests that drive it with real Chromium.

import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import express from "express";
import { createLinkSimulator, type LinkSimulatorOptions } from "../../src/simulators/link/index.js";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Deterministic enough to recognise, random enough that two clients never share a QR. */
export function fakeQr(amount: string, currency: 116 | 840): string {
  return `KHQR-${amount}-${currency}-${randomBytes(4).toString("hex")}`;
}

export interface RunningLinkSim {
  baseUrl: string;
  /** A configured payment-link URL, as the admin would store it. */
  linkUrl(slug?: string, currency?: "KHR" | "USD"): string;
  post(path: string, body: unknown): Promise<{ status: number; body: unknown }>;
  get(path: string): Promise<{ status: number; body: unknown }>;
  close(): Promise<void>;
}

export async function startLinkSim(options: Partial<LinkSimulatorOptions> = {}): Promise<RunningLinkSim> {
  const sim = createLinkSimulator({ makeQr: fakeQr, ...options });
  const app = express();
  app.use(sim.router);
  app.use(sim.controls);
  const server = app.listen(0, "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const call = jsonCaller(baseUrl);
  return {
    baseUrl,
    linkUrl: (slug = "coffee-shop", currency = "KHR") => `${baseUrl}/sim/link/p/${slug}?currency=${currency}`,
    post: (path, body) => call("POST", path, body),
    get: (path) => call("GET", path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `(method, path, body?)` against `origin`: the status and the answer as JSON, or as text when it is not (HTML pages). */
export function jsonCaller(origin: string) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }> => {
    const res = await fetch(origin + path, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // HTML pages stay text
    }
    return { status: res.status, body: parsed };
  };
}

/** How many status polls the payment page of `clientId` has made on the link simulator at `origin` (a monitor holds it). */
export async function pagePolls(origin: string, clientId: string): Promise<number> {
  const res = await fetch(`${origin}/sim/link/clients/${clientId}`);
  return res.status === 200 ? ((await res.json()) as { polls: number }).polls : 0;
}

/** How many requests (page loads, status polls) an injected fault has answered on the link simulator at `origin`. */
export async function faultAnswers(origin: string): Promise<number> {
  return ((await (await fetch(`${origin}/sim/link/fault`)).json()) as { faultAnswers: number }).faultAnswers;
}
