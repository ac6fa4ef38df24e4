import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * The file the checkout page and the dashboard load as their `money.js`: money.ts compiled by `npm run build`, next
 * to this file in dist/ (the built service and the image), or dist's copy when running from the sources (jest, which
 * `npm test` builds first). One source, money.ts, for the server and the browsers.
 */
export function moneyModuleFile(): string {
  const candidates = [join(here, "money.js"), join(here, "../../dist/src/money/money.js")];
  return candidates.find((file) => existsSync(file)) ?? candidates[0];
}

/** A static-asset resolver (src/cache/static-assets.ts `serveAssets`) answering `path` with the money module. */
export function moneyModuleAt(path: string): (requested: string) => string | null {
  return (requested) => (requested === path ? moneyModuleFile() : null);
}
