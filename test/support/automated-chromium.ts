// Chromium as it would run without the pool's navigator.webdriver fix (decision 0197): a wrapper to give as
// CHROMIUM_PATH that drops `--disable-blink-features=AutomationControlled` from the flags the pool launches it with
// and runs the real browser with the rest. Puppeteer's --enable-automation then makes navigator.webdriver true in
// every page, as in any browser a test tool launches; the user agent the pool sets still says Chrome.

import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CHROMIUM_PATH } from "./link-sim.js";

/** Writes the wrapper into `dir` and returns its path. */
export function automatedChromium(dir: string): string {
  const path = join(dir, "chromium-automated");
  const script = [
    "#!/bin/sh",
    // `for` walks the original arguments while the list is rebuilt without the one flag.
    "for arg do",
    "  shift",
    '  [ "$arg" = "--disable-blink-features=AutomationControlled" ] || set -- "$@" "$arg"',
    "done",
    `exec ${JSON.stringify(CHROMIUM_PATH)} "$@"`,
    "",
  ].join("\n");
  writeFileSync(path, script);
  chmodSync(path, 0o755);
  return path;
}
