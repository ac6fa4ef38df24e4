// Issue 8 "Bad input" for QR strings: ≥ 100 000 random and mutated strings into verifyKhqr/decodeKhqr
// (mutations of valid KHQRs from our own encoder: character flips, insertions, truncations, lengths that
// lie, tags dropped/repeated/reordered/renamed, nested templates corrupted, and most of them given a
// correct CRC again so the deeper rules are reached), then a few thousand through REST /qr/verify and
// /qr/decode of the running service, which must answer exactly what the library answers.
//
// Replay: FUZZ_SEED=<printed seed>; FUZZ_QR_RUNS scales the counts. fast-check shrinks a failure here
// (pure functions, cheap), so the reported counterexample is small.
import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import fc from "fast-check";
import { decodeKhqr, encodeKhqr, verifyKhqr, type KhqrDecodeResult } from "../../../src/khqr/index.js";
import { validInput } from "../../khqr/arbitraries.js";
import { editArb, fixCrc, mutate } from "../../support/khqr-mutations.js";
import { checkDecodeResult } from "../../support/contract.js";
import { startService, type FuzzService } from "../../support/service.js";
import { Client, pool } from "../../support/http.js";

const RUNS = Number(process.env.FUZZ_QR_RUNS ?? 100_000);
const REST_RUNS = Math.max(1000, Math.ceil(RUNS / 25));
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const NOW = Date.UTC(2026, 5, 1);

/** Valid QRs whose timestamps straddle NOW, so expiry is judged both ways. */
const validQr = validInput().map((x) => {
  if (x.expirationTimestamp !== undefined && x.creationTimestamp !== undefined) {
    const shift = NOW - x.creationTimestamp - 1000;
    x.creationTimestamp += shift;
    x.expirationTimestamp += shift;
  }
  return encodeKhqr(x).qr;
});

/** 3 000 valid QRs drawn once (seeded): mutating a pool is much cheaper than generating a new input each run. */
const POOL = fc.sample(validQr, { seed: SEED, numRuns: 3000 });

/** A mutated valid QR; `fixed` says whether its CRC was made right again after the edits. */
const mutatedQr = fc
  .tuple(fc.constantFrom(...POOL), fc.array(editArb, { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: 9 }))
  .map(([qr, edits, f]) => {
    const m = mutate(qr, edits);
    return { s: f < 7 ? fixCrc(m) : m, fixed: f < 7, original: qr };
  });

const randomString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 400 }),
  fc.stringMatching(/^[0-9A-F]{0,300}$/),
  fc
    .array(fc.tuple(fc.integer({ min: 0, max: 99 }), fc.string({ unit: "grapheme-ascii", maxLength: 30 })), {
      maxLength: 20,
    })
    .map((tlvs) =>
      fixCrc(tlvs.map(([id, v]) => `${String(id).padStart(2, "0")}${String(v.length).padStart(2, "0")}${v}`).join("")),
    ),
  fc.constantFrom("", "0", "6304", "000201", "00020101021229", "\u0000".repeat(10), "\ud800", "0".repeat(10_000)),
);

/** Every property of one string; returns the first broken one. */
function check(s: string): string | null {
  let verified: unknown;
  let decoded: KhqrDecodeResult;
  try {
    verified = verifyKhqr(s, NOW);
  } catch (err) {
    return `verifyKhqr threw ${String(err)}`;
  }
  try {
    decoded = decodeKhqr(s);
  } catch (err) {
    return `decodeKhqr threw ${String(err)}`;
  }
  if (typeof verified !== "boolean") return `verify returned ${typeof verified}`;
  const shape = checkDecodeResult(decoded);
  if (shape) return `decode shape: ${shape}`;
  // verify and decode agree: valid by decode and not expired ⇔ verify true.
  const exp = decoded.data.expirationTimestamp;
  const unexpired = exp === undefined || Number(exp) > NOW;
  if (verified && decoded.status.code !== 0)
    return `verify true but decode code ${decoded.status.code} (${decoded.status.message})`;
  if (!verified && decoded.status.code === 0 && unexpired)
    return `decode code 0 and not expired (${exp}) but verify false`;
  if (decoded.status.code === 0 && decoded.data.crc !== s.slice(-4))
    return `decoded crc ${decoded.data.crc} is not the string's last 4 characters`;
  // The reader keeps its offsets in module state: reading another string in between must not change the answer.
  decodeKhqr("00020101021229370016test@devb");
  verifyKhqr("0002", NOW);
  const again = decodeKhqr(s);
  if (JSON.stringify(again) !== JSON.stringify(decoded)) return "decode answered differently the second time";
  return null;
}

const stats = {
  mutated: 0,
  mutatedFixed: 0,
  acceptedAfterMutation: 0,
  random: 0,
  codes: new Map<number, number>(),
  restMs: 0,
  pureMs: 0,
};

describe(`QR string fuzz (seed ${SEED}, ${RUNS} strings)`, () => {
  beforeAll(() => console.log(`QR fuzz seed ${SEED} — replay with FUZZ_SEED=${SEED}`));
  afterAll(() => {
    console.log(
      `QR fuzz (seed ${SEED}): ${stats.mutated} mutated (${stats.mutatedFixed} with the CRC fixed, ${stats.acceptedAfterMutation} still valid), ${stats.random} random, ${(stats.pureMs / 1000).toFixed(1)} s; ` +
        `REST ${REST_RUNS} × 2 in ${(stats.restMs / 1000).toFixed(1)} s; error codes seen ${JSON.stringify(Object.fromEntries([...stats.codes].sort((a, b) => a[0] - b[0])))}`,
    );
  });

  it(`${Math.ceil(RUNS * 0.8)} mutated valid QRs: never throw, the documented shape, verify and decode agree`, () => {
    const t0 = performance.now();
    fc.assert(
      fc.property(mutatedQr, ({ s, fixed, original }) => {
        stats.mutated++;
        if (fixed) stats.mutatedFixed++;
        const problem = check(s);
        if (problem)
          throw new Error(`${problem}\n  string:   ${JSON.stringify(s)}\n  original: ${JSON.stringify(original)}`);
        const code = decodeKhqr(s).status.errorCode ?? 0;
        stats.codes.set(code, (stats.codes.get(code) ?? 0) + 1);
        if (code === 0 && s !== original) stats.acceptedAfterMutation++;
      }),
      { seed: SEED, numRuns: Math.ceil(RUNS * 0.8) },
    );
    stats.pureMs += performance.now() - t0;
    // The CRC fix-up must actually get strings past the checksum: many fixed strings fail a deeper rule.
    expect([...stats.codes.keys()].filter((c) => c !== 0 && c !== 8).length).toBeGreaterThan(10);
  });

  it(`${Math.ceil(RUNS * 0.2)} random strings: never throw, the documented shape, verify and decode agree`, () => {
    const t0 = performance.now();
    fc.assert(
      fc.property(randomString, (s) => {
        stats.random++;
        const problem = check(s);
        if (problem) throw new Error(`${problem}\n  string: ${JSON.stringify(s).slice(0, 2000)}`);
      }),
      { seed: SEED + 1, numRuns: Math.ceil(RUNS * 0.2) },
    );
    stats.pureMs += performance.now() - t0;
  });

  describe("through REST", () => {
    let svc: FuzzService;
    let client: Client;
    let headers: Record<string, string>;
    beforeAll(async () => {
      svc = await startService();
      const t = await svc.createTenant({ name: "QR fuzz" });
      headers = { "content-type": "application/json", "x-api-key": t.keys.qr, "x-auth-type": "api-key" };
      client = new Client(svc.url, 8);
    }, 60_000);
    afterAll(async () => {
      client?.close();
      await svc?.stop();
    });

    it(`${REST_RUNS} strings each to /qr/verify and /qr/decode answer exactly what the library answers`, async () => {
      const t0 = performance.now();
      const strings = fc.sample(
        fc.oneof(
          { weight: 4, arbitrary: mutatedQr.map((m) => m.s) },
          { weight: 1, arbitrary: randomString },
          { weight: 1, arbitrary: validQr },
        ),
        { seed: SEED + 2, numRuns: REST_RUNS },
      );
      const answers = await pool(strings, 8, async (s) => {
        const body = Buffer.from(JSON.stringify({ qrData: s }));
        const [v, d] = await Promise.all([
          client.send({ method: "POST", path: "/qr/verify", headers, body }),
          client.send({ method: "POST", path: "/qr/decode", headers, body }),
        ]);
        return { s, v, d };
      });
      stats.restMs = performance.now() - t0;
      for (const { s, v, d } of answers) {
        const where = `for ${JSON.stringify(s).slice(0, 300)}`;
        expect([where, v.status, d.status]).toEqual([where, 200, 200]);
        // The server's clock is not NOW: compare verify where expiry is not in play.
        const local = decodeKhqr(s);
        expect([where, d.json]).toEqual([where, JSON.parse(JSON.stringify(local))]);
        const exp = local.data.expirationTimestamp;
        if (exp === undefined || Math.abs(Number(exp) - Date.now()) > 3_600_000)
          expect([where, v.json]).toEqual([where, verifyKhqr(s, Date.now())]);
        else expect([where, typeof v.json]).toEqual([where, "boolean"]);
      }
      expect(svc.exit).toBeNull();
      expect(svc.errorLines()).toEqual([]);
    });
  });
});
