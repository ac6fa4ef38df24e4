import { randomFillSync } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/** Random bytes drawn from the CSPRNG a page at a time (one call per id was a visible share of a generate request). */
const pool = Buffer.alloc(4096);
let offset = pool.length;

function take(n: number): Buffer {
  if (n > pool.length) return randomFillSync(Buffer.alloc(n));
  if (offset + n > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const out = pool.subarray(offset, offset + n);
  offset += n;
  return out;
}

/** Opaque, URL-safe random identifiers with a readable type prefix (`txn_…`, `evt_…`). */
export function newId(prefix: string, bytes = 15): string {
  const buf = take(bytes);
  let out = `${prefix}_`;
  for (const b of buf) out += ALPHABET[b & 31];
  return out;
}
