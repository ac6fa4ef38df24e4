// Runs the PayWay twin as two real HTTP servers on loopback, for tests that drive it with real Chromium: the page on
// 127.0.0.1 and its API named `localhost`, two hosts as link.payway.com.kh and pwapp.ababank.com are, so the browser
// keeps each one's cookies to itself (cookies ignore ports: on one host name the page's would reach the API).

import { jsonCaller } from "./link-sim.js";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import express from "express";
import { TEST_KEEP_ALIVE_MS } from "./listen.js";
import {
  createPaywayTwin,
  type PaywayTwin,
  type PaywayTwinOptions,
  type TwinLink,
} from "../../src/simulators/payway/index.js";
import { fakeQr } from "./link-sim.js";

export interface RunningTwin {
  twin: PaywayTwin;
  /** The page's origin (controls are there too). */
  pageOrigin: string;
  /** The API's origin: PAYWAY_API_ORIGIN. */
  apiOrigin: string;
  /** Registers a link and returns its URL, as a merchant would configure it. */
  link(input?: Partial<TwinLink>): Promise<string>;
  post(path: string, body: unknown): Promise<{ status: number; body: unknown }>;
  get(path: string): Promise<{ status: number; body: unknown }>;
  /** The API's server closed (its connections too): a poll meets a refused connection until apiUp(). */
  apiDown(): Promise<void>;
  /** The API's server listening again, on the same port. */
  apiUp(): Promise<void>;
  close(): Promise<void>;
}

async function listen(app: express.Express, name = "127.0.0.1", port = 0): Promise<{ server: Server; origin: string }> {
  const server = app.listen(port, "127.0.0.1");
  server.keepAliveTimeout = TEST_KEEP_ALIVE_MS;
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  return { server, origin: `http://${name}:${(server.address() as AddressInfo).port}` };
}

export async function startPaywayTwin(options: Partial<PaywayTwinOptions> = {}): Promise<RunningTwin> {
  let apiOrigin = "";
  const twin = createPaywayTwin({ makeQr: fakeQr, apiOrigin: () => apiOrigin, ...options });
  const pageApp = express();
  pageApp.use(twin.controls, twin.page);
  const apiApp = express();
  apiApp.use(twin.api);
  const page = await listen(pageApp);
  let api: { server: Server | null; origin: string } = await listen(apiApp, "localhost");
  apiOrigin = api.origin;
  const call = jsonCaller(page.origin);
  const close = (server: Server) =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return {
    twin,
    pageOrigin: page.origin,
    apiOrigin: api.origin,
    async link(input = {}) {
      const res = await call("POST", "/sim/payway/links", input);
      if (res.status !== 200) throw new Error(`twin refused the link: ${JSON.stringify(res.body)}`);
      return `${page.origin}${twin.linkPath((res.body as TwinLink).code)}`;
    },
    post: (path, body) => call("POST", path, body),
    get: (path) => call("GET", path),
    async apiDown() {
      if (api.server !== null) await close(api.server);
      api = { ...api, server: null };
    },
    async apiUp() {
      if (api.server !== null) return;
      api = await listen(apiApp, "localhost", Number(new URL(api.origin).port));
    },
    close: async () => {
      await close(page.server);
      if (api.server !== null) await close(api.server);
    },
  };
}
