// The PayWay twin's edge, as Cloudflare sits in front of link.payway.com.kh and pwapp.ababank.com: what it saw of each
// caller (the user agent and client hints of page loads and API calls, what the page's script reported of its
// browser), and, in the `challenge` fault mode, its managed challenge for a headless fingerprint. The public sources
// of each rule: docs/link-simulator.md, "Refusals told apart".

import { randomBytes } from "node:crypto";
import type { Request, Response } from "express";
import { renderTwinNotice } from "./twin-page.js";

/** A page load as the edge saw it. */
export interface SeenPage {
  link: string;
  at: string;
  userAgent: string | null;
  /** The Sec-CH-UA client hint (the browser's brands), when sent. */
  secChUa: string | null;
  challenged: boolean;
}

/** What the page's script reported of its browser (challenge mode: the edge's JavaScript detections). */
export interface SeenScript {
  link: string;
  at: string;
  webdriver: boolean | null;
  userAgent: string | null;
  brands: string[];
}

/** An API call as the edge saw it. */
export interface SeenCall {
  call: string;
  at: string;
  userAgent: string | null;
  /** The Sec-CH-UA client hint, when sent (a browser's calls; the worker's own polls send none). */
  secChUa: string | null;
  challenged: boolean;
}

const KEPT = 200;

export class TwinEdge {
  readonly pages: SeenPage[] = [];
  readonly scripts: SeenScript[] = [];
  readonly calls: SeenCall[] = [];
  /** Page loads per link code (all time). */
  readonly visits = new Map<string, number>();
  /** A page's detections by its ray id: the visit (aba_data) it belongs to, and what its script said. */
  private readonly rays = new Map<string, { abaData: string; link: string; automated: boolean | null }>();
  private readonly byAbaData = new Map<string, string>();

  constructor(private readonly clock: () => number) {}

  /** A page load; `challenged`: the edge answered it with its challenge. */
  notePage(req: Request, link: string, challenged: boolean): void {
    this.visits.set(link, (this.visits.get(link) ?? 0) + 1);
    keep(this.pages, {
      link,
      at: this.now(),
      userAgent: req.get("user-agent") ?? null,
      secChUa: req.get("sec-ch-ua") ?? null,
      challenged,
    });
  }

  noteCall(req: Request, call: string, challenged: boolean): void {
    const seen = {
      call,
      at: this.now(),
      userAgent: req.get("user-agent") ?? null,
      secChUa: req.get("sec-ch-ua") ?? null,
    };
    keep(this.calls, { ...seen, challenged });
  }

  /** A ray id for a page served with detections, tied to its visit. */
  rayFor(abaData: string, link: string): string {
    const ray = randomBytes(8).toString("hex");
    if (this.rays.size >= 10_000) {
      const oldest = this.rays.keys().next().value as string;
      this.byAbaData.delete(this.rays.get(oldest)?.abaData ?? "");
      this.rays.delete(oldest);
    }
    this.rays.set(ray, { abaData, link, automated: null });
    this.byAbaData.set(abaData, ray);
    return ray;
  }

  /** The page script's report: automated when navigator.webdriver is true or a brand or the agent says headless. */
  noteScript(ray: string, body: Record<string, unknown>): boolean {
    const entry = this.rays.get(ray);
    if (entry === undefined) return false;
    const userAgent = typeof body.userAgent === "string" ? body.userAgent.slice(0, 512) : null;
    const brands = Array.isArray(body.brands) ? body.brands.filter((b) => typeof b === "string").slice(0, 10) : [];
    const webdriver = typeof body.webdriver === "boolean" ? body.webdriver : null;
    entry.automated = webdriver !== false || headlessText(userAgent) || brands.some((b) => headlessText(b));
    keep(this.scripts, { link: entry.link, at: this.now(), webdriver, userAgent, brands: brands as string[] });
    return true;
  }

  /**
   * Whether the visit a list-payment-options call names passed the page's detections: its script reported, and
   * reported no automation (a client that never ran the page's script has not passed either).
   */
  passed(abaData: string): boolean {
    const ray = this.byAbaData.get(abaData);
    return ray !== undefined && this.rays.get(ray)?.automated === false;
  }

  /** What the edge saw, for the controls. */
  view() {
    return {
      visits: Object.fromEntries(this.visits),
      pages: this.pages,
      scripts: this.scripts,
      calls: this.calls,
    };
  }

  private now(): string {
    return new Date(this.clock()).toISOString();
  }
}

/** A request whose user agent or client hints name a headless browser. */
export function headlessRequest(req: Request): boolean {
  return headlessText(req.get("user-agent")) || headlessText(req.get("sec-ch-ua"));
}

function headlessText(text: string | null | undefined): boolean {
  return typeof text === "string" && /HeadlessChrome/i.test(text);
}

function keep<T>(list: T[], item: T): void {
  list.push(item);
  if (list.length > KEPT) list.shift();
}

/**
 * Cloudflare's managed challenge as a refused caller receives it: HTTP 403, `cf-mitigated: challenge`, a `cf-ray`,
 * and the "Just a moment..." interstitial whose script comes from /cdn-cgi/challenge-platform/ (`_cf_chl_opt`).
 */
export function sendChallenge(res: Response): void {
  const ray = `${randomBytes(8).toString("hex")}-SIN`;
  const page = renderTwinNotice(
    "Just a moment...",
    "Checking your browser before accessing link.payway.com.kh.",
  ).replace(
    "</body>",
    `<script>window._cf_chl_opt={cRay:"${ray}",cType:"managed"};</script>` +
      // The interstitial loads its script from here; the twin only names it (nothing to solve).
      `<script>window._cf_chl_src="/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1?ray=${ray}";</script>` +
      "</body>",
  );
  res
    .status(403)
    .set({ "cf-mitigated": "challenge", "cf-ray": ray, "cache-control": "private, max-age=0, no-store" })
    .type("html")
    .send(page);
}

/**
 * The edge's JavaScript detections, run by the page before its own script: what the browser says of itself
 * (navigator.webdriver, navigator.userAgent, navigator.userAgentData's brands), reported to the page's origin
 * synchronously, so the report is in before the page can ask for a QR. `reportPath` is relative to the page.
 */
export function detectionScript(reportPath: string): string {
  return String.raw`
(function () {
  try {
    var data = navigator.userAgentData;
    var report = {
      webdriver: navigator.webdriver === true,
      userAgent: navigator.userAgent,
      brands: data && data.brands ? data.brands.map(function (b) { return b.brand; }) : []
    };
    var xhr = new XMLHttpRequest();
    xhr.open("POST", ${JSON.stringify(reportPath)}, false);
    xhr.setRequestHeader("content-type", "application/json");
    xhr.send(JSON.stringify(report));
  } catch (e) {}
})();
`;
}
