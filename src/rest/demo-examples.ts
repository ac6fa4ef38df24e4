import { readFileSync } from "node:fs";
import type { KeyKind } from "../auth/api-key.entity.js";
import type { KeyKindSpec } from "../auth/key-kinds.js";
import type { DocsExample, JsonSchema } from "./openapi.js";

/**
 * Demo mode's /docs: examples that are live values of the demo tenant and the page authorised with its keys, so
 * "Try it out" → Execute answers 200 on all eight paths as shown. The values come from one transaction per area,
 * issued through the REST endpoints themselves with the demo keys the first time the document is asked for (the
 * tenant exists only once the demo seed has run), and kept for the life of the process.
 */
export interface DemoDocs {
  /** The document with every `{{…}}` of the examples replaced; unchanged where a value could not be had. */
  document(base: JsonSchema): Promise<JsonSchema>;
  /** Security scheme → key, for the page to authorise itself; null until demo.json exists. */
  keys(): Record<string, string> | null;
}

type Values = Partial<Record<KeyKind, Record<string, string>>>;
type DemoKeys = Record<KeyKind, string>;

/** What demo docs read of an area (module.ts AreaDefinition): its key kind and its example generate. */
export interface DocsArea {
  key: KeyKindSpec;
  docsExample?: DocsExample;
}
type ExampleArea = DocsArea & { docsExample: NonNullable<DocsArea["docsExample"]> };

/** The demo tenant's key of each area, from demo.json (its `keys` field names them: `docsExample.demoKey`). */
function readKeys(demoFile: string, areas: readonly ExampleArea[]): DemoKeys | null {
  try {
    const k = (JSON.parse(readFileSync(demoFile, "utf8")) as { keys?: Record<string, unknown> }).keys;
    const keys: DemoKeys = {};
    for (const a of areas) {
      const plain = k?.[a.docsExample.demoKey];
      if (typeof plain !== "string") return null;
      keys[a.key.kind] = plain;
    }
    return keys;
  } catch {
    return null; // not written yet: the demo tenant is created after the server starts
  }
}

/**
 * One generate per area not issued yet (an area whose generate fails — no Chromium for the payment-link area —
 * keeps its placeholders and is tried again next time).
 */
async function issueMissing(
  baseUrl: string,
  areas: readonly ExampleArea[],
  keys: DemoKeys,
  values: Values,
): Promise<void> {
  for (const { key, docsExample } of areas) {
    const kind = key.kind;
    if (values[kind] !== undefined) continue;
    const res = await fetch(`${baseUrl}${docsExample.path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": keys[kind], "x-auth-type": key.authType },
      body: JSON.stringify(docsExample.body()),
    }).catch(() => null);
    if (res === null || res.status !== 200) continue;
    const answer = (await res.json()) as { transactionId: string };
    const mine: Record<string, string> = { transactionId: answer.transactionId };
    for (const [name, at] of Object.entries(docsExample.answer ?? {})) {
      const v = at.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], answer);
      if (typeof v === "string" && v !== "") mine[name] = v;
    }
    values[kind] = mine;
  }
}

/** A generate path: its example's fresh placeholders take new values (a check reads the issued one instead). */
export const takesFresh = (path: string): boolean => /generate/.test(path);

/** Which area a path's example draws on (its key's: the area whose paths it is under). */
const areaOf = (path: string, areas: readonly DocsArea[]): DocsArea | undefined =>
  areas.find((a) => path.startsWith(a.key.paths.replace(/\*$/, "")));

function fill(example: unknown, path: string, values: Values, areas: readonly DocsArea[]): unknown {
  const area = areaOf(path, areas);
  const mine = (area === undefined ? undefined : values[area.key.kind]) ?? {};
  const text = JSON.stringify(example).replace(/\{\{(\w+)\}\}/g, (whole, name: string) => {
    // A generate takes a new one of the area's `fresh` values every time; a check reads the one already issued.
    const fresh = area?.docsExample?.fresh?.[name];
    if (fresh !== undefined && takesFresh(path)) return fresh.make();
    return mine[name] ?? whole;
  });
  return JSON.parse(text);
}

export function demoDocs(baseUrl: string, demoFile: string, all: readonly DocsArea[]): DemoDocs {
  const areas = all.filter((a): a is ExampleArea => a.docsExample !== undefined);
  const values: Values = {};
  let issuing: Promise<void> | null = null;
  return {
    keys() {
      const k = readKeys(demoFile, areas);
      if (k === null) return null;
      return Object.fromEntries(areas.map((a) => [a.key.scheme.name, k[a.key.kind]]));
    },
    async document(base) {
      const keys = readKeys(demoFile, areas);
      if (keys === null) return base;
      if (Object.keys(values).length < areas.length)
        await (issuing ??= issueMissing(baseUrl, areas, keys, values).finally(() => (issuing = null)));
      const doc = structuredClone(base) as { paths: Record<string, { post: JsonSchema }> };
      for (const [path, item] of Object.entries(doc.paths)) {
        const content = (item.post.requestBody as { content: Record<string, { example?: unknown }> }).content;
        const json = content["application/json"];
        if (json?.example !== undefined) json.example = fill(json.example, path, values, all);
      }
      return doc;
    },
  };
}
