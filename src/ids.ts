import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/** Opaque, URL-safe random identifiers with a readable type prefix (`txn_…`, `evt_…`). */
export function newId(prefix: string, bytes = 15): string {
  const buf = randomBytes(bytes);
  let out = `${prefix}_`;
  for (const b of buf) out += ALPHABET[b & 31];
  return out;
}
