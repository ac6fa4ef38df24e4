// How the pool's pages introduce themselves: a current Chrome's user agent, never "HeadlessChrome", with client hints
// (navigator.userAgentData, Sec-CH-UA) that agree with it. Headless Chromium names itself in both, and a payment
// provider's edge (Cloudflare) may challenge what names itself so (decision 0197). Pure: the browser's version in,
// the CDP override out.

import type { Protocol } from "puppeteer-core";

/**
 * The user agent of a Chrome on desktop Linux of `major`: Chrome reduces its user agent to the major version
 * ("<major>.0.0.0") since Chrome 101, so this is what every Chrome of that version on Linux sends. Linux, because the
 * browser is one: its navigator.platform, fonts and network stack say Linux, and a user agent that claims Windows
 * over them is an inconsistency bot checks look for.
 */
export function defaultUserAgent(major: string): string {
  return `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 Safari/537.36`;
}

/** The major version in a browser's product string ("HeadlessChrome/131.0.6778.85", "Chrome/131…"), or null. */
export function majorVersion(product: string): string | null {
  return /(?:Chrome|Chromium)\/(\d+)/.exec(product)?.[1] ?? null;
}

/**
 * The override every page gets (Emulation.setUserAgentOverride): `configured` (LINK_USER_AGENT) or the default of
 * the running browser's major version, with client hints derived from that user agent: its Chrome version and its
 * platform, the brands a Chromium of that version lists without "HeadlessChrome".
 */
export function userAgentOverride(
  configured: string | null,
  browserProduct: string,
): Protocol.Emulation.SetUserAgentOverrideRequest {
  const own = majorVersion(browserProduct) ?? "0";
  const userAgent = configured ?? defaultUserAgent(own);
  const major = majorVersion(userAgent) ?? own;
  const { platform, navigatorPlatform, architecture } = platformOf(userAgent);
  const brands = [
    { brand: "Chromium", version: major },
    { brand: "Not_A Brand", version: "24" },
  ];
  return {
    userAgent,
    acceptLanguage: "en-US,en;q=0.9",
    platform: navigatorPlatform,
    userAgentMetadata: {
      brands,
      fullVersionList: brands.map((b) => ({ ...b, version: b.brand === "Chromium" ? `${major}.0.0.0` : b.version })),
      fullVersion: `${major}.0.0.0`,
      platform,
      platformVersion: "",
      architecture,
      model: "",
      mobile: /Android|Mobile/.test(userAgent),
      bitness: "64",
      wow64: false,
    },
  };
}

/**
 * The low-entropy client hint headers of an override, as Chromium writes them (`"Chromium";v="131", "Not_A
 * Brand";v="24"`, `?0`, `"Linux"`), by lower-case header name. A page created with its URL starts its first
 * navigation before the override is set: Chromium then sends the user agent overridden but these hints as the
 * browser's own (its real version and grease), a disagreement a bot check can read; the pool puts these on that
 * request (interceptRequests).
 */
export function clientHintHeaders(override: Protocol.Emulation.SetUserAgentOverrideRequest): Record<string, string> {
  const meta = override.userAgentMetadata;
  if (meta === undefined) return {};
  return {
    "sec-ch-ua": (meta.brands ?? []).map((b) => `"${b.brand}";v="${b.version}"`).join(", "),
    "sec-ch-ua-mobile": meta.mobile ? "?1" : "?0",
    "sec-ch-ua-platform": `"${meta.platform}"`,
  };
}

/** Client hints' platform and navigator.platform for the platform a user agent names. */
function platformOf(userAgent: string): { platform: string; navigatorPlatform: string; architecture: string } {
  if (/Windows/.test(userAgent)) return { platform: "Windows", navigatorPlatform: "Win32", architecture: "x86" };
  if (/Macintosh/.test(userAgent)) return { platform: "macOS", navigatorPlatform: "MacIntel", architecture: "x86" };
  if (/Android/.test(userAgent)) return { platform: "Android", navigatorPlatform: "Linux armv81", architecture: "" };
  return { platform: "Linux", navigatorPlatform: "Linux x86_64", architecture: "x86" };
}
