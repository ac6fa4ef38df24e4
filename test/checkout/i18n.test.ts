import { describe, it, expect } from "@jest/globals";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

/**
 * The checkout's words and dates (src/checkout/public/i18n.js, plain browser JavaScript, loaded here as the ES
 * module it is): both languages say everything, the browser's languages pick one, times are Phnom Penh's with
 * Latin digits.
 */
interface I18n {
  STRINGS: Record<"en" | "km", Record<string, string>>;
  t(language: string, key: string, vars?: Record<string, string>): string;
  chooseLanguage(browser: readonly string[] | undefined, stored: string | null): string;
  formatDateTime(iso: string | null, language: string): string;
}

const load = async () => (await import(pathToFileURL("src/checkout/public/i18n.js").href)) as I18n;
const KHMER = /[\u1780-\u17FF]/;

describe("checkout words and dates", () => {
  it("Khmer and English have the same strings, none empty, every Khmer one written in Khmer script", async () => {
    const { STRINGS } = await load();
    expect(Object.keys(STRINGS.km).sort()).toEqual(Object.keys(STRINGS.en).sort());
    for (const [key, km] of Object.entries(STRINGS.km)) {
      expect([key, km.trim() !== "" && STRINGS.en[key].trim() !== ""]).toEqual([key, true]);
      expect([key, KHMER.test(km)]).toEqual([key, true]);
      // The same placeholders in both, so no value is lost in translation.
      expect([key, km.match(/\{\w+\}/g) ?? []]).toEqual([key, STRINGS.en[key].match(/\{\w+\}/g) ?? []]);
    }
    // Every string the page's scripts ask for exists (t() would otherwise show the key itself).
    const scripts = ["checkout.js", "page.js"].map((f) => readFileSync(`src/checkout/public/${f}`, "utf8")).join("\n");
    const asked = new Set<string>();
    for (const m of scripts.matchAll(/\bsay\(\s*"(\w+)"/g)) asked.add(m[1]);
    for (const m of scripts.matchAll(/\bt\(\s*[\w.]+\s*,\s*"(\w+)"/g)) asked.add(m[1]);
    for (const m of scripts.matchAll(/const (?:STATUS_TEXT|FINAL_NOTE) = \{([^}]*)\}/g))
      for (const v of m[1].matchAll(/:\s*"(\w+)"/g)) asked.add(v[1]);
    expect([...asked].filter((k) => !(k in STRINGS.en))).toEqual([]);
    expect(asked.size).toBeGreaterThan(15);
  });

  it("the browser's languages decide (the first Khmer or English one), unless the switch chose before", async () => {
    const { chooseLanguage } = await load();
    expect(chooseLanguage(["km-KH", "en-US"], null)).toBe("km");
    expect(chooseLanguage(["km"], null)).toBe("km");
    expect(chooseLanguage(["fr-FR", "km-KH", "en"], null)).toBe("km");
    expect(chooseLanguage(["en-GB", "km"], null)).toBe("en");
    expect(chooseLanguage(["th-TH", "zh-CN"], null)).toBe("en");
    expect(chooseLanguage([], null)).toBe("en");
    expect(chooseLanguage(undefined, null)).toBe("en");
    // As Chromium reports an Accept-Language override: "km;q=0.9".
    expect(chooseLanguage(["km;q=0.9"], null)).toBe("km");
    expect(chooseLanguage(["km-KH"], "en")).toBe("en");
    expect(chooseLanguage(["en-US"], "km")).toBe("km");
    expect(chooseLanguage(["km-KH"], "fr")).toBe("km");
  });

  it("times: Phnom Penh's wall clock (UTC+7) with the date, Latin digits, 24 hours, across a year's end", async () => {
    const { formatDateTime } = await load();
    expect(formatDateTime("2026-11-25T15:54:00.000Z", "en")).toBe("25 Nov 2026, 22:54");
    expect(formatDateTime("2026-11-25T15:54:00.000Z", "km")).toBe("25 វិច្ឆិកា 2026 ម៉ោង 22:54");
    expect(formatDateTime("2026-12-31T17:00:00.000Z", "en")).toBe("1 Jan 2027, 00:00");
    expect(formatDateTime("2026-12-31T17:00:00.000Z", "km")).toBe("1 មករា 2027 ម៉ោង 00:00");
    expect(formatDateTime("2026-04-14T05:07:00.000Z", "km")).toBe("14 មេសា 2026 ម៉ោង 12:07");
    expect(formatDateTime(null, "en")).toBe("");
    expect(formatDateTime("not a date", "km")).toBe("");
  });

  it("t() fills placeholders and reads English for a language it does not have", async () => {
    const { t } = await load();
    expect(t("en", "expiresIn", { clock: "1:59" })).toBe("Expires in 1:59");
    expect(t("km", "expiresIn", { clock: "1:59" })).toBe("ផុតកំណត់ក្នុងរយៈពេល 1:59");
    expect(t("fr", "paid")).toBe("Paid");
  });
});
