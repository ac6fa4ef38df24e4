// Every REST answer the test suite sees is checked against the OpenAPI document's schema for its path and
// status (test/rest/openapi.test.ts checks the document itself). `post` (app.ts) and `postJson`
// (traffic.ts) call `checkRestAnswer`, so every REST test contributes.

import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

type Doc = {
  paths: Record<string, { post: { responses: Record<string, { content?: Record<string, { schema: object }> }> } }>;
};

let doc: Promise<Doc> | null = null;
const validators = new Map<string, ValidateFunction>();
/** How many answers were checked in this test file (the contract test asserts it grows). */
export const checked = { count: 0 };

export function restDocument(): Promise<Doc> {
  doc ??= import("../../src/app.js").then((m) => m.restOpenApi() as Promise<Doc>);
  return doc;
}

function validator(path: string, status: string, schema: object): ValidateFunction {
  const key = `${path} ${status}`;
  let v = validators.get(key);
  if (v === undefined) {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormats as unknown as (a: Ajv2020) => void)(ajv);
    v = ajv.compile(schema);
    validators.set(key, v);
  }
  return v;
}

/**
 * A Content-Type header's media type without its parameters, lower case (RFC 9110 §8.3.1): the service answers
 * `application/json; charset=utf-8`, and the document's `application/json` describes it (OpenAPI's content keys
 * are media types; a parameter does not make another one).
 */
export function mediaTypeOf(contentType: string | null): string | null {
  return contentType === null ? null : contentType.split(";")[0].trim().toLowerCase();
}

/**
 * Throws when a POST to one of the REST paths was answered with a status, a media type (when `contentType` is
 * given) or a body the document does not describe.
 */
export async function checkRestAnswer(
  url: string,
  status: number,
  body: unknown,
  contentType?: string | null,
): Promise<void> {
  const path = new URL(url).pathname;
  const d = await restDocument();
  const op = d.paths[path]?.post;
  if (op === undefined) return; // not a REST contract path (/graphql, /sim/…, an unknown route)
  const response = op.responses[String(status)];
  if (response === undefined)
    throw new Error(`OpenAPI: POST ${path} answered ${status}, a status the document does not list`);
  const media = mediaTypeOf(contentType ?? null);
  if (contentType !== undefined && response.content !== undefined && (media === null || !(media in response.content)))
    throw new Error(`OpenAPI: POST ${path} ${status} answered ${contentType}, a media type the document does not list`);
  const schema = response.content?.["application/json"]?.schema;
  if (schema === undefined) return;
  const v = validator(path, String(status), schema);
  if (!v(body))
    throw new Error(
      `OpenAPI: POST ${path} ${status} does not match the document: ${JSON.stringify(v.errors?.slice(0, 3))}\n` +
        `body: ${JSON.stringify(body)?.slice(0, 500)}`,
    );
  checked.count++;
}
