// A payment page's form filled as a visitor fills it, robust to how the page is built: each step waits in the page
// (a MutationObserver, and a quarter-second look for what no mutation announces, such as a stylesheet that shows
// a field) until what it needs is visible and enabled — after the page's framework has hydrated it — then acts.
// Every step runs in an isolated world of the page (its document, none of its scripts: a page that replaced
// focus(), click() or the value setter does not see them called).

import type { CDPSession } from "puppeteer-core";
import type { FieldHints } from "./link-protocol.js";

/** The element a step waits for is not on the page (yet) when the time is up. */
export class MissingElementError extends Error {
  override readonly name = "MissingElementError";
}

/** What the page's amount field turned out to be: typed into, or showing a fixed amount of the link's own. */
export type AmountOutcome = { kind: "filled" } | { kind: "fixed"; value: string };

/** How Continue was activated (docs/decisions/0200-page-interaction-as-a-visitor.md, "Measured"). */
export type Activation = "keys" | "clicked";

/** Helpers every step's script shares (plain script, run as written). */
const HELPERS = String.raw`
  const norm = (s) => String(s == null ? "" : s).replace(/[\u200b-\u200d\ufeff]/g, "").replace(/\s+/g, " ").trim().toLowerCase();
  const shown = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== "hidden";
  const usable = (e) =>
    !e.matches(":disabled") && norm(e.getAttribute("aria-disabled")) !== "true" && getComputedStyle(e).pointerEvents !== "none";
  const labelOf = (e) => {
    const parts = [e.getAttribute("aria-label"), e.getAttribute("placeholder"), e.getAttribute("title")];
    for (const l of e.labels || []) parts.push(l.textContent);
    for (const id of norm(e.getAttribute("aria-labelledby")).split(" ")) {
      const l = id && document.getElementById(id);
      if (l) parts.push(l.textContent);
    }
    return norm(parts.join(" "));
  };
  const says = (text, words) => words.some((w) => text.includes(w));
  const CONTACT = /phone|mobile|e-?mail|\btel\b|telephone|ទូរស័ព្ទ|អ៊ីមែល|អ៊ីម៉ែល/;
  const kindOf = (e) => norm(e.type);
  // A phone or e-mail field, however it says so: never where an amount goes.
  const contact = (e) => {
    const mode = norm(e.getAttribute("inputmode"));
    return ["tel", "email"].includes(kindOf(e)) || ["tel", "email"].includes(mode) ||
      /tel|email/.test(norm(e.getAttribute("autocomplete"))) ||
      CONTACT.test(norm([e.getAttribute("name"), e.id].join(" ")) + " " + labelOf(e));
  };
  const TYPED = ["text", "number", "tel", "email", "search", "textarea"];
  const fields = () => Array.from(document.querySelectorAll("input, textarea")).filter((e) => TYPED.includes(kindOf(e)) && shown(e));
  // The value as the page's own framework sees an edit: the element's native setter (not one the framework put on
  // the element), then input and change events.
  const put = (e, value) => {
    const proto = e.tagName === "TEXTAREA" ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
    e.focus();
    Object.getOwnPropertyDescriptor(proto, "value").set.call(e, value);
    e.dispatchEvent(new Event("input", { bubbles: true }));
    e.dispatchEvent(new Event("change", { bubbles: true }));
    return e.value === value;
  };
  const editable = (e) => usable(e) && !e.readOnly;
`;

/**
 * Waits for the amount field and types `amount` into it; or, when the field is read-only with a value (a link of a
 * fixed amount), reports that value untouched. The field is chosen by kind, not by its place in the document:
 * `type=number`, then `inputmode` decimal or numeric, then a label or placeholder containing one of `words`; a
 * phone or e-mail field never.
 */
export async function fillAmount(
  session: CDPSession,
  words: readonly string[],
  amount: string,
  timeoutMs: number,
): Promise<AmountOutcome> {
  const find = `
    const WORDS = ${JSON.stringify(words.map((w) => w.toLowerCase()))};
    const rank = (e) => kindOf(e) === "number" ? 1
      : ["decimal", "numeric"].includes(norm(e.getAttribute("inputmode"))) ? 2
      : says(labelOf(e), WORDS) ? 3 : 0;
    let best = null, bestRank = 4;
    for (const e of fields()) {
      if (e.tagName === "TEXTAREA" || contact(e)) continue;
      const r = rank(e);
      if (r > 0 && r < bestRank) { best = e; bestRank = r; }
    }
    if (best === null) return undefined;
    if (editable(best)) return put(best, ${JSON.stringify(amount)}) ? { kind: "filled" } : undefined;
    // Disabled and empty: not hydrated yet. Read-only (or disabled) with a value: the link's own amount.
    return best.value.trim() === "" ? undefined : { kind: "fixed", value: best.value.trim() };`;
  const outcome = await waitInPage(session, find, timeoutMs);
  if (outcome === null) throw new MissingElementError("the payment page has no amount field");
  return outcome as AmountOutcome;
}

/** Waits for the field `hints` describe (visible and enabled) and puts `value` in it; never the amount's field. */
export async function fillField(
  session: CDPSession,
  hints: FieldHints,
  value: string,
  what: string,
  timeoutMs: number,
): Promise<void> {
  const find = `
    const H = ${JSON.stringify({ ...hints, names: hints.names.map(norm), words: hints.words.map(norm) })};
    const rank = (e) => {
      if (H.names.includes(norm(e.getAttribute("name"))) || H.names.includes(norm(e.id))) return 1;
      if (H.type !== undefined && kindOf(e) === H.type) return 2;
      return says(labelOf(e), H.words) ? 3 : 0;
    };
    let best = null, bestRank = 4;
    for (const e of fields()) {
      // A field of another kind: a phone or e-mail field for a name or remark, an amount field for anything.
      if (H.type === undefined ? contact(e) || kindOf(e) === "number" : ["tel", "email"].includes(kindOf(e)) && kindOf(e) !== H.type)
        continue;
      const r = rank(e);
      if (r > 0 && r < bestRank) { best = e; bestRank = r; }
    }
    if (best === null || !editable(best)) return undefined;
    return put(best, ${JSON.stringify(value)}) ? true : undefined;`;
  if ((await waitInPage(session, find, timeoutMs)) === null)
    throw new MissingElementError(`the payment page has no ${what} field`);
}

/**
 * Waits for the page's Continue — a `button`, `a`, `[role=button]` or `input[type=submit]` whose text (an input's
 * value) is one of `words`, else contains one — to be visible and enabled (not disabled, not aria-disabled), and
 * activates it: a button, a submit input or a link with an href is focused and answered with Enter by the caller
 * (a visitor's trusted key press, which the browser turns into the element's click); any other (a link without an
 * href, a `[role=button]`) takes no key as a button does and is clicked from the isolated world.
 */
export async function pressContinue(session: CDPSession, words: readonly string[], timeoutMs: number): Promise<void> {
  const find = `
    const WORDS = ${JSON.stringify(words.map(norm))};
    const textOf = (e) => norm(e.tagName === "INPUT" ? e.value : e.textContent || e.getAttribute("aria-label"));
    const all = Array.from(document.querySelectorAll('button, a, [role="button"], input[type="submit"]')).filter(shown);
    const button = all.find((e) => WORDS.includes(textOf(e))) || all.find((e) => says(textOf(e), WORDS));
    if (!button || !usable(button)) return undefined;
    const native = button.tagName === "BUTTON" || button.tagName === "INPUT" || (button.tagName === "A" && button.hasAttribute("href"));
    if (native) {
      button.focus();
      if (document.activeElement === button) return "keys";
    }
    button.click();
    return "clicked";`;
  const how = (await waitInPage(session, find, timeoutMs)) as Activation | null;
  if (how === null)
    throw new MissingElementError(`the payment page has no enabled button reading "${words.join('" or "')}"`);
  if (how === "keys") await pressEnterKey(session);
}

async function pressEnterKey(session: CDPSession): Promise<void> {
  const key = { key: "Enter", code: "Enter", windowsVirtualKeyCode: 13 };
  await session.send("Input.dispatchKeyEvent", { type: "keyDown", ...key, text: "\r", unmodifiedText: "\r" });
  await session.send("Input.dispatchKeyEvent", { type: "keyUp", ...key });
}

function norm(s: string): string {
  return s.replace(/\s+/g, " ").trim().toLowerCase();
}

/**
 * Runs `find` (a function body returning undefined until it has its answer) in an isolated world of the page, on
 * every change of the document and every 250 ms, until it answers or `timeoutMs` is up (null). A navigation of the
 * page destroys the world: the wait starts again in the new document, within the same time.
 */
async function waitInPage(session: CDPSession, find: string, timeoutMs: number): Promise<unknown> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = Math.max(1, deadline - Date.now());
    const expression = `(() => {${HELPERS}
      const find = () => {${find}
      };
      return new Promise((resolve) => {
        let done = false;
        const finish = (v) => {
          if (done) return;
          done = true;
          observer.disconnect();
          clearInterval(tick);
          clearTimeout(timer);
          resolve(v);
        };
        const attempt = () => {
          if (done) return;
          let v;
          try { v = find(); } catch (e) { v = undefined; }
          if (v !== undefined) finish(v);
        };
        const observer = new MutationObserver(attempt);
        observer.observe(document, { childList: true, subtree: true, attributes: true, characterData: true });
        const tick = setInterval(attempt, 250);
        const timer = setTimeout(() => finish(null), ${left});
        attempt();
      });
    })()`;
    try {
      const contextId = await isolatedWorld(session);
      const { result, exceptionDetails } = await session.send("Runtime.evaluate", {
        expression,
        contextId,
        awaitPromise: true,
        returnByValue: true,
      });
      if (exceptionDetails) throw new Error(`the payment page's form could not be read: ${exceptionDetails.text}`);
      return result.value ?? null;
    } catch (err) {
      const navigated = /context was destroyed|Cannot find context|Cannot find default execution context/i;
      if (!navigated.test((err as Error).message) || Date.now() >= deadline) throw err;
    }
  }
}

/** A JavaScript world of our own in the page's main frame: the page's document, none of its scripts. */
async function isolatedWorld(session: CDPSession): Promise<number> {
  const { frameTree } = await session.send("Page.getFrameTree");
  const { executionContextId } = await session.send("Page.createIsolatedWorld", {
    frameId: frameTree.frame.id,
    worldName: "payment-form",
  });
  return executionContextId;
}
