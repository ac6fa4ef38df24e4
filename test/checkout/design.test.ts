import { describe, it, expect } from "@jest/globals";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { CARD_DESIGN } from "../../src/qr/card.js";

/**
 * The checkout page's stylesheet against what it must agree with: the KHQR card that /cards draws (one design on
 * screen and as an image), and the installed font package (its files are cached for a year per URL).
 */
const css = readFileSync("src/checkout/public/checkout.css", "utf8");

describe("checkout stylesheet", () => {
  it("draws the card with the /cards design: its red, the folded corner's red and size, the header's height, the greys", () => {
    const rule = (selector: string) => {
      const at = css.indexOf(`${selector} {`);
      expect(at).toBeGreaterThanOrEqual(0);
      return css.slice(at, css.indexOf("}", at)).toLowerCase();
    };
    expect(rule(".pqc-head")).toContain(`background: ${CARD_DESIGN.red.toLowerCase()};`);
    expect(rule(".pqc-head")).toContain(`height: ${CARD_DESIGN.headerPx}px;`);
    expect(rule(".pqc-head")).toContain(`calc(100% - ${CARD_DESIGN.foldPx}px) 0, 100% ${CARD_DESIGN.foldPx}px`);
    expect(rule(".pqc-head::after")).toContain(CARD_DESIGN.darkRed.toLowerCase());
    expect(rule(".pqc-head::after")).toContain(`width: ${CARD_DESIGN.foldPx}px;`);
    expect(rule(".pqc-merchant")).toContain(`color: ${CARD_DESIGN.muted.toLowerCase()};`);
    expect(rule(".pqc-currency")).toContain(`color: ${CARD_DESIGN.muted.toLowerCase()};`);
    expect(rule(".pqc-divider")).toContain(CARD_DESIGN.divider.toLowerCase());
  });

  it("asks for the Khmer font with the installed package's version (a year's cache per URL)", () => {
    const asked = [...css.matchAll(/url\("fonts\/([\w-]+\.woff2)\?v=([\d.]+)"\)/g)];
    expect(asked.map((m) => m[1]).sort()).toEqual([
      "noto-sans-khmer-khmer-400-normal.woff2",
      "noto-sans-khmer-khmer-700-normal.woff2",
    ]);
    const dir = dirname(createRequire(import.meta.url).resolve("@fontsource/noto-sans-khmer"));
    const installed = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }).version;
    const declared = (JSON.parse(readFileSync("package.json", "utf8")) as { dependencies: Record<string, string> })
      .dependencies["@fontsource/noto-sans-khmer"];
    expect(new Set(asked.map((m) => m[2]))).toEqual(new Set([installed]));
    expect(declared).toBe(installed);
  });
});
