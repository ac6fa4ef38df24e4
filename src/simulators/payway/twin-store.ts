// In-memory state of the PayWay twin: the links it serves, each page visit (its aba_data and request_time),
// the bot-management cookies it handed out, and one client per QR issued. Bounded like the other simulators.

import { randomBytes, randomInt } from "node:crypto";
import type { TwinLinkOptions } from "./twin-layout.js";

export type TwinCurrency = "USD" | "KHR";
/** request_qr and approved are seen live; scanned and processing-payment come from the page's bundle; declined is ours. */
export type TwinAction = "request_qr" | "scanned" | "processing-payment" | "approved" | "declined";

/** A link: what it is, and how its page is built and what it asks for (twin-layout.ts). */
export interface TwinLink extends TwinLinkOptions {
  code: string;
  currency: TwinCurrency;
  title: string;
  merchant: string;
  minAmount: string;
  maxAmount: string;
}

export interface TwinVisit {
  abaData: string;
  requestTime: string;
  link: TwinLink;
  createdAt: number;
}

export interface TwinClient {
  readonly clientId: string;
  readonly token: string;
  readonly requestTime: string;
  readonly link: TwinLink;
  readonly amount: string;
  /** additional_fields as the page sent them (amount and any other field), to show what went where. */
  readonly additionalFields: Readonly<Record<string, string>>;
  readonly qr: string;
  readonly createdAt: number;
  action: TwinAction;
  /** Polls still to answer `processing-payment` before `approved` (approve passes through it once). */
  processingPolls: number;
  broken: boolean;
  /** What a broken client's polls answer: 500 unless the break named another status. */
  brokenStatus: number;
  scannedAt?: number;
  approvedAt?: number;
  declinedAt?: number;
  receiptFile?: string;
  polls: number;
  lastPollAt?: number;
  /** The most recent device ids, oldest first (bounded); the page makes a fresh one per poll. */
  readonly deviceIds: string[];
  /** Polls that reused a device id this client had already seen. */
  reusedDeviceIds: number;
  /** When the most recent polls arrived (ms, oldest first, bounded): how regular the poller is. */
  readonly pollTimes: number[];
  /** The cookies the most recent polls carried (oldest first, bounded): the page's `__cf_bm` should never be there. */
  readonly pollCookies: PollCookies[];
  /** An action public code does not show, reported by polls instead of request_qr or scanned (a control sets it). */
  unknownAction: string | null;
}

/** Who set a `__cf_bm` value: the page's origin or the API's (each origin its own, as Cloudflare sets one per host). */
export type CookieIssuer = "page" | "api";

/** What one poll's Cookie header carried: its cookie names, and whose `__cf_bm` it was (null: none, or not ours). */
export interface PollCookies {
  names: string[];
  cfBm: CookieIssuer | null;
}

export type ControlOutcome = { ok: true; client: TwinClient } | { ok: false; conflict: string };

const COOKIE_LIFETIME_MS = 30 * 60_000;
/**
 * A client (a QR issued) is kept as long as the QR lives, 30 days (its KHQR tag 99 in captured real payloads): an
 * approval may come hours after the 180 s, and a poll of it must still find it. Visits go after an hour.
 */
const CLIENT_RETENTION_MS = 30 * 24 * 3600_000;
const KEPT_DEVICE_IDS = 200;

export class TwinStore {
  readonly links = new Map<string, TwinLink>();
  private readonly visits = new Map<string, TwinVisit>();
  private readonly clients = new Map<string, TwinClient>();
  private readonly cookies = new Map<string, { until: number; issuer: CookieIssuer }>();
  /** Page origins that served a page: the API accepts calls from these only (Origin, Referer). */
  readonly origins = new Set<string>();

  constructor(
    private readonly clock: () => number,
    private readonly maxEntries = 10_000,
    private readonly retentionMs = 3_600_000,
  ) {}

  visit(link: TwinLink, requestTime: string): TwinVisit {
    this.evict(this.visits, this.retentionMs);
    // Standard base64 of opaque bytes, as the real aba_data: it carries '/' (which the page's HTML escapes).
    let abaData = randomBytes(96).toString("base64");
    if (!abaData.includes("/")) abaData = `${abaData.slice(0, 10)}/${abaData.slice(11)}`;
    const visit = { abaData, requestTime, link, createdAt: this.clock() };
    this.visits.set(abaData, visit);
    return visit;
  }

  visitOf(abaData: string): TwinVisit | undefined {
    return this.visits.get(abaData);
  }

  /** A fresh `__cf_bm` value for the page's origin or the API's, valid 30 minutes like Cloudflare's. */
  issueCookie(issuer: CookieIssuer): string {
    if (this.cookies.size >= this.maxEntries) this.cookies.delete(this.cookies.keys().next().value as string);
    const value = randomBytes(32).toString("base64url");
    this.cookies.set(value, { until: this.clock() + COOKIE_LIFETIME_MS, issuer });
    return value;
  }

  /** Who issued this `__cf_bm` value and it is still live: null for anything else. */
  cookieIssuer(value: string | undefined): CookieIssuer | null {
    const c = value === undefined ? undefined : this.cookies.get(value);
    return c !== undefined && c.until > this.clock() ? c.issuer : null;
  }

  createClient(visit: TwinVisit, amount: string, qr: string, additionalFields: Record<string, string>): TwinClient {
    this.evict(this.clients, CLIENT_RETENTION_MS);
    const client: TwinClient = {
      clientId: `${randomInt(1_000_000, 9_999_999)}-${randomInt(100_000, 999_999)}-${randomInt(10_000_000, 99_999_999)}`,
      // A long opaque bearer value, about the size of the real one (~1.5 KB).
      token: randomBytes(1100).toString("base64url"),
      requestTime: visit.requestTime,
      link: visit.link,
      amount,
      additionalFields,
      qr,
      createdAt: this.clock(),
      action: "request_qr",
      processingPolls: 0,
      broken: false,
      brokenStatus: 500,
      polls: 0,
      deviceIds: [],
      reusedDeviceIds: 0,
      pollTimes: [],
      pollCookies: [],
      unknownAction: null,
    };
    this.clients.set(client.clientId, client);
    return client;
  }

  /** Clients issued and still kept (a test sees whether an attempt reached list-payment-options). */
  clientCount(): number {
    return this.clients.size;
  }

  client(clientId: string): TwinClient | undefined {
    return this.clients.get(clientId);
  }

  clientByReceipt(file: string): TwinClient | undefined {
    for (const c of this.clients.values()) if (c.receiptFile === file) return c;
    return undefined;
  }

  notePoll(client: TwinClient, deviceId: string, cookies: PollCookies): void {
    client.pollCookies.push(cookies);
    if (client.pollCookies.length > KEPT_DEVICE_IDS) client.pollCookies.shift();
    client.polls += 1;
    client.lastPollAt = this.clock();
    if (client.deviceIds.includes(deviceId)) client.reusedDeviceIds += 1;
    client.deviceIds.push(deviceId);
    if (client.deviceIds.length > KEPT_DEVICE_IDS) client.deviceIds.shift();
    client.pollTimes.push(client.lastPollAt);
    if (client.pollTimes.length > KEPT_DEVICE_IDS) client.pollTimes.shift();
  }

  scan(client: TwinClient): ControlOutcome {
    if (client.action === "approved" || client.action === "processing-payment" || client.action === "declined")
      return { ok: false, conflict: `client ${client.clientId} is already ${client.action}` };
    client.action = "scanned";
    client.unknownAction = null;
    client.scannedAt ??= this.clock();
    return { ok: true, client };
  }

  /** Polls report `action` (a word public code does not show) until the payer scans, approves or declines. */
  report(client: TwinClient, action: string): ControlOutcome {
    if (client.action !== "request_qr" && client.action !== "scanned")
      return { ok: false, conflict: `client ${client.clientId} is already ${client.action}` };
    client.unknownAction = action;
    return { ok: true, client };
  }

  /** Approved after one poll that reports processing-payment; allowed long after the QR's 180 s, as ABA does. */
  approve(client: TwinClient): ControlOutcome {
    if (client.action === "declined") return { ok: false, conflict: `client ${client.clientId} was declined` };
    if (client.action === "approved" || client.action === "processing-payment") return { ok: true, client };
    client.action = "processing-payment";
    client.unknownAction = null;
    client.processingPolls = 1;
    client.approvedAt = this.clock();
    client.receiptFile = randomBytes(12).toString("hex");
    return { ok: true, client };
  }

  /**
   * approve-late: a client still waiting whose creation is `afterMs` or more ago (the twin's clock) is approved now, as
   * of creation + afterMs (then reported as approve() reports it: processing-payment once, then approved).
   */
  approveLate(client: TwinClient, afterMs: number): void {
    if (client.action !== "request_qr" && client.action !== "scanned") return;
    if (this.clock() - client.createdAt < afterMs) return;
    this.approve(client);
    client.approvedAt = client.createdAt + afterMs;
  }

  decline(client: TwinClient): ControlOutcome {
    if (client.action === "approved" || client.action === "processing-payment")
      return { ok: false, conflict: `client ${client.clientId} is already approved` };
    client.action = "declined";
    client.unknownAction = null;
    client.declinedAt ??= this.clock();
    return { ok: true, client };
  }

  /**
   * What a poll reports now (a pending approval moves on once its processing-payment poll was answered): a TwinAction,
   * or the word `report` set.
   */
  actionForPoll(client: TwinClient): string {
    if (client.unknownAction !== null) return client.unknownAction;
    if (client.action !== "processing-payment") return client.action;
    if (client.processingPolls > 0) {
      client.processingPolls -= 1;
      return client.action;
    }
    client.action = "approved";
    return client.action;
  }

  private evict<T extends { createdAt: number }>(map: Map<string, T>, retentionMs: number): void {
    const now = this.clock();
    for (const [k, v] of map) {
      if (map.size < this.maxEntries && now - v.createdAt < retentionMs) break;
      map.delete(k);
    }
  }
}
