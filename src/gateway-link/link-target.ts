/**
 * The one exception to "unknown REST fields are ignored" (docs/decisions/0094-unknown-rest-fields-ignored.md;
 * the exception itself is docs/decisions/0095-fields-naming-a-target-refused.md): on
 * `/gateway-link/generate-qr` a field that would name a target is refused with 400, so a caller can never
 * believe it chose or overrode the payment link (the contract: the API key fixes it). A field names a target
 * when one of its words (split at case changes, digits, `_`, `-`, `.` and spaces) is url, uri, link, href
 * (or their plurals), or when the whole name is one of TARGET_NAMES. Known fields never match.
 */
const TARGET_WORDS: ReadonlySet<string> = new Set(["url", "urls", "uri", "uris", "link", "links", "href", "hrefs"]);
const TARGET_NAMES: ReadonlySet<string> = new Set([
  "target",
  "redirect",
  "redirectto",
  "destination",
  "endpoint",
  "host",
  "hostname",
  "domain",
]);

export function namesTarget(field: string): boolean {
  const words = field
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter((w) => w.length > 0);
  return words.some((w) => TARGET_WORDS.has(w)) || TARGET_NAMES.has(words.join(""));
}
