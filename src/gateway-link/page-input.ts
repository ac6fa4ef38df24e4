// A visitor's keyboard on a leased page, over the page's own CDP session: find a field by its selector, focus it,
// type into it, press Enter (the simulated page; a PayWay page's form is filled by page-form.ts). Keyboard only: a
// hidden target draws no frames, so it never takes mouse input. Each step is one or two protocol commands.

import type { CDPSession } from "puppeteer-core";

/** The element the selector names is not on the page (yet) when the time is up. */
export class MissingElementError extends Error {
  override readonly name = "MissingElementError";
}

export interface FocusOptions {
  /** Empty an input's value first. */
  clear?: boolean;
  /** Only an element whose text is this, case-insensitively, else one whose text contains it (a button's label). */
  text?: string;
}

/**
 * Waits until `selector` matches an element (with `text`, one whose label is that), then focuses it. The wait
 * runs in the page (a MutationObserver, no polling from here) and gives up after `timeoutMs`.
 */
export async function focusElement(
  session: CDPSession,
  selector: string,
  timeoutMs: number,
  opts: FocusOptions = {},
): Promise<void> {
  const expression = `new Promise((resolve) => {
    const selector = ${JSON.stringify(selector)};
    const label = ${JSON.stringify(opts.text?.trim().toLowerCase() ?? null)};
    const text = (e) => (e.textContent || "").replace(/\\s+/g, " ").trim().toLowerCase();
    const find = () => {
      if (label === null) return document.querySelector(selector);
      const all = Array.from(document.querySelectorAll(selector));
      // The button reading exactly the label, else one whose label contains it ("Continue ›", an icon's text).
      return all.find((e) => text(e) === label) || all.find((e) => text(e).includes(label));
    };
    const take = () => {
      const el = find();
      if (!el) return false;
      if (${opts.clear ? "true" : "false"} && el instanceof HTMLInputElement) el.value = "";
      if (typeof el.focus === "function") el.focus();
      resolve(true);
      return true;
    };
    if (take()) return;
    const observer = new MutationObserver(() => { if (take()) observer.disconnect(); });
    observer.observe(document, { childList: true, subtree: true, attributes: true, characterData: true });
    setTimeout(() => { observer.disconnect(); resolve(false); }, ${Math.max(1, Math.floor(timeoutMs))});
  })`;
  const { result, exceptionDetails } = await session.send("Runtime.evaluate", {
    expression,
    awaitPromise: true,
    returnByValue: true,
  });
  if (exceptionDetails) throw new Error(`the payment page's script failed: ${exceptionDetails.text}`);
  if (result.value !== true)
    throw new MissingElementError(`the payment page has no ${selector}${opts.text ? ` reading "${opts.text}"` : ""}`);
}

/** Types `text` into the focused element, one key press per character, as a visitor does. */
export async function typeText(session: CDPSession, text: string): Promise<void> {
  for (const ch of text) {
    await session.send("Input.dispatchKeyEvent", { type: "keyDown", key: ch, text: ch, unmodifiedText: ch });
    await session.send("Input.dispatchKeyEvent", { type: "keyUp", key: ch });
  }
}

/** Presses Enter on the focused element (a focused button submits its form). */
export async function pressEnter(session: CDPSession): Promise<void> {
  const key = { key: "Enter", code: "Enter", windowsVirtualKeyCode: 13 };
  await session.send("Input.dispatchKeyEvent", { type: "keyDown", ...key, text: "\r", unmodifiedText: "\r" });
  await session.send("Input.dispatchKeyEvent", { type: "keyUp", ...key });
}
