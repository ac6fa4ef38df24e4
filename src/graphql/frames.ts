import { randomBytes } from "node:crypto";
import { exactReplacer, spliceExact, stringifyExact } from "../exact-json.js";

/** A per-process marker no client can forge: stands for a payload's `data` already serialised. */
const MARK = `\u0000frame-${randomBytes(8).toString("hex")}:`;
const MARK_JSON = JSON.stringify(MARK).slice(1, -1);

/**
 * A live event's result is the same object for every subscriber with the same selection (SharedExecution);
 * graphql-ws still serialises it once per socket (each frame carries its subscription id). These two
 * functions make that once per result: `replacer` (graphql-ws's jsonMessageReplacer) writes a short marker
 * for a shared `data` object, serialised on first sight, and `splice` (in each socket's send, on the text
 * graphql-ws produced) puts the text in. Everything else goes through the exact-JSON replacer as before.
 */
export class SharedFrames {
  private readonly ids = new WeakMap<object, number>();
  private readonly texts = new Map<number, string>();
  private next = 0;

  /** graphql-ws's jsonMessageReplacer. */
  readonly replacer: (this: unknown, key: string, v: unknown) => unknown;

  /** `isShared(v)`: whether `v` is a result's data shared between subscribers. */
  constructor(
    private readonly isShared: (v: object) => boolean,
    private readonly keep = 200,
  ) {
    const marker = (v: object) => this.marker(v);
    this.replacer = function (this: unknown, key: string, v: unknown): unknown {
      if (key === "data" && v !== null && typeof v === "object" && isShared(v)) return marker(v);
      return exactReplacer.call(this, key, v);
    };
  }

  private marker(v: object): string {
    let id = this.ids.get(v);
    if (id === undefined || !this.texts.has(id)) {
      id = this.next++;
      this.ids.set(v, id);
      this.texts.set(id, stringifyExact(v));
      if (this.texts.size > this.keep) this.texts.delete(this.texts.keys().next().value as number);
    }
    return MARK + id;
  }

  /** The frame with every marker replaced by its text (and exact-JSON markers spliced, as before). */
  splice(frame: string): string {
    let out = frame;
    // `"<mark><id>"` → the text; indexOf and slices (a frame holds one, at its payload's data).
    for (let at = out.indexOf(MARK_JSON); at > 0; at = out.indexOf(MARK_JSON, at)) {
      const end = out.indexOf('"', at + MARK_JSON.length);
      const text = this.texts.get(Number(out.slice(at + MARK_JSON.length, end)));
      if (text === undefined || out[at - 1] !== '"') {
        at = end;
        continue;
      }
      out = out.slice(0, at - 1) + text + out.slice(end + 1);
      at = at - 1 + text.length;
    }
    return spliceExact(out);
  }
}
