// In-memory state of the PayWay twin: the links it serves, each page visit (its aba_data and request_time),
// the bot-management cookies it handed out, and one client per QR issued. Bounded like the other simulators.

import { randomBytes, randomInt } from "node:crypto";

export type TwinCurrency = "USD" | "KHR";
/** request_qr and approved are seen live; scanned and processing-payment come from the page's bundle; declined is ours. */
export type TwinAction = "request_qr" | "scanned" | "processing-payment" | "approved" | "declined";

export interface TwinLink {
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
}

export type ControlOutcome = { ok: true; client: TwinClient } | { ok: false; conflict: string };

const COOKIE_LIFETIME_MS = 30 * 60_000;
const KEPT_DEVICE_IDS = 200;

export class TwinStore {
  readonly links = new Map<string, TwinLink>();
  private readonly visits = new Map<string, TwinVisit>();
  private readonly clients = new Map<string, TwinClient>();
  private readonly cookies = new Map<string, number>();
  /** Page origins that served a page: the API accepts calls from these only (Origin, Referer). */
  readonly origins = new Set<string>();

  constructor(
    private readonly clock: () => number,
    private readonly maxEntries = 10_000,
    private readonly retentionMs = 3_600_000,
  ) {}

  visit(link: TwinLink, requestTime: string): TwinVisit {
    this.evict(this.visits);
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

  /** A fresh `__cf_bm` value, valid 30 minutes like Cloudflare's. */
  issueCookie(): string {
    if (this.cookies.size >= this.maxEntries) this.cookies.delete(this.cookies.keys().next().value as string);
    const value = randomBytes(32).toString("base64url");
    this.cookies.set(value, this.clock() + COOKIE_LIFETIME_MS);
    return value;
  }

  cookieValid(value: string | undefined): boolean {
    const until = value === undefined ? undefined : this.cookies.get(value);
    return until !== undefined && until > this.clock();
  }

  createClient(visit: TwinVisit, amount: string, qr: string): TwinClient {
    this.evict(this.clients);
    const client: TwinClient = {
      clientId: `${randomInt(1_000_000, 9_999_999)}-${randomInt(100_000, 999_999)}-${randomInt(10_000_000, 99_999_999)}`,
      // A long opaque bearer value, about the size of the real one (~1.5 KB).
      token: randomBytes(1100).toString("base64url"),
      requestTime: visit.requestTime,
      link: visit.link,
      amount,
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
    };
    this.clients.set(client.clientId, client);
    return client;
  }

  client(clientId: string): TwinClient | undefined {
    return this.clients.get(clientId);
  }

  clientByReceipt(file: string): TwinClient | undefined {
    for (const c of this.clients.values()) if (c.receiptFile === file) return c;
    return undefined;
  }

  notePoll(client: TwinClient, deviceId: string): void {
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
    client.scannedAt ??= this.clock();
    return { ok: true, client };
  }

  /** Approved after one poll that reports processing-payment; allowed long after the QR's 180 s, as ABA does. */
  approve(client: TwinClient): ControlOutcome {
    if (client.action === "declined") return { ok: false, conflict: `client ${client.clientId} was declined` };
    if (client.action === "approved" || client.action === "processing-payment") return { ok: true, client };
    client.action = "processing-payment";
    client.processingPolls = 1;
    client.approvedAt = this.clock();
    client.receiptFile = randomBytes(12).toString("hex");
    return { ok: true, client };
  }

  decline(client: TwinClient): ControlOutcome {
    if (client.action === "approved" || client.action === "processing-payment")
      return { ok: false, conflict: `client ${client.clientId} is already approved` };
    client.action = "declined";
    client.declinedAt ??= this.clock();
    return { ok: true, client };
  }

  /** What a poll reports now (a pending approval moves on once its processing-payment poll was answered). */
  actionForPoll(client: TwinClient): TwinAction {
    if (client.action !== "processing-payment") return client.action;
    if (client.processingPolls > 0) {
      client.processingPolls -= 1;
      return client.action;
    }
    client.action = "approved";
    return client.action;
  }

  private evict<T extends { createdAt: number }>(map: Map<string, T>): void {
    const now = this.clock();
    for (const [k, v] of map) {
      if (map.size < this.maxEntries && now - v.createdAt < this.retentionMs) break;
      map.delete(k);
    }
  }
}
