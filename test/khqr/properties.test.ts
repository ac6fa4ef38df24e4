import { describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { decodeKhqr, encodeKhqr, validateKhqrInput, verifyKhqr } from "../../src/khqr/index.js";
import { expectedDecode, validInput } from "./arbitraries.js";
import { buildCorpus } from "./corpus.js";
import { individualFull, recrc, tlv } from "./fixtures.js";
import { sdkDecodeHangs } from "./sdk-guard.js";
import { WILD_VECTORS } from "./wild-vectors.js";

const TEN_KB = 10 * 1024;

/** Any UTF-16 code units, lone surrogates included. */
const codeUnits = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: TEN_KB }).map((a) => {
  let s = "";
  for (const c of a) s += String.fromCharCode(c);
  return s;
});
/** Bytes read as Latin-1, as a scanner handing over raw bytes would. */
const bytes = fc.uint8Array({ maxLength: TEN_KB }).map((b) => Buffer.from(b).toString("latin1"));
/** Valid QRs with random edits: the inputs most likely to reach deep into the reader. */
const mutatedQr = fc
  .tuple(
    validInput(),
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 0xffff }), fc.constantFrom("replace", "insert", "delete")), {
      minLength: 1,
      maxLength: 4,
    }),
  )
  .map(([x, edits]) => {
    let s = encodeKhqr(x).qr;
    for (const [at, c, op] of edits) {
      const i = at % (s.length + 1);
      const ch = String.fromCharCode(c);
      s =
        op === "insert"
          ? s.slice(0, i) + ch + s.slice(i)
          : op === "delete"
            ? s.slice(0, i) + s.slice(i + 1)
            : s.slice(0, i) + ch + s.slice(i + 1);
    }
    return s;
  });

/**
 * Valid QRs whose account template (29/30) gains a cut-short last sub-object ("…5"), CRC redone:
 * the shape on which the SDK's decode and verify never return.
 */
const sdkHangQr = fc.tuple(validInput(), fc.integer({ min: 0, max: 9 })).map(([x, digit]) => {
  const qr = encodeKhqr(x).qr;
  for (let i = 0; i + 4 <= qr.length;) {
    const id = qr.slice(i, i + 2);
    const end = i + 4 + Number(qr.slice(i + 2, i + 4));
    if ((id === "29" || id === "30") && end - i - 4 < 99)
      return recrc(qr.slice(0, i) + tlv(id, qr.slice(i + 4, end) + String(digit)) + qr.slice(end));
    i = end;
  }
  return qr;
});

/** Best of five timings of decode + verify on s, in ms (the best, so a GC pause or a busy machine is not counted). */
function answerMs(s: string): number {
  let best = Infinity;
  for (let k = 0; k < 5; k++) {
    const t = process.hrtime.bigint();
    decodeKhqr(s);
    verifyKhqr(s, 0);
    best = Math.min(best, Number(process.hrtime.bigint() - t) / 1e6);
  }
  return best;
}

describe("KHQR codec properties", () => {
  it("decode(encode(x)) gives back every field of x", () => {
    fc.assert(
      fc.property(validInput(), (x) => {
        const { qr } = encodeKhqr(x);
        const r = decodeKhqr(qr);
        expect(r.status).toEqual({ code: 0, errorCode: null, message: null });
        expect(r.data).toEqual(expectedDecode(x, qr));
      }),
      { numRuns: 500 },
    );
  });

  it("encode output verifies at any time up to its expiration millisecond, and not after", () => {
    fc.assert(
      fc.property(validInput(), fc.nat({ max: 10 ** 9 }), (x, before) => {
        const { qr } = encodeKhqr(x);
        const exp = x.expirationTimestamp;
        if (exp === undefined) {
          expect(verifyKhqr(qr, 1_700_000_000_000 + before)).toBe(true);
        } else {
          expect(verifyKhqr(qr, exp - before)).toBe(true);
          expect(verifyKhqr(qr, exp + 1 + before)).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("validateKhqrInput accepts exactly what encode accepts", () => {
    const patched = fc
      .tuple(
        validInput(),
        fc.constantFrom(
          "merchantName",
          "merchantCity",
          "bakongAccountId",
          "amount",
          "billNumber",
          "merchantCategoryCode",
        ),
        fc.string({ maxLength: 40 }),
      )
      .map(([x, k, v]) => ({ ...x, [k]: v }));
    fc.assert(
      fc.property(patched, (x) => {
        const errors = validateKhqrInput(x);
        let thrown: unknown = null;
        try {
          encodeKhqr(x);
        } catch (e) {
          thrown = e;
        }
        expect(thrown === null).toBe(errors.length === 0);
        if (thrown !== null) expect(thrown).toMatchObject({ errorCode: errors[0].errorCode, field: errors[0].field });
      }),
      { numRuns: 500 },
    );
  });

  it("decode and verify never throw and decode always answers a well-shaped result, on strings and bytes up to 10 KB", () => {
    fc.assert(
      fc.property(
        fc.oneof(codeUnits, bytes, fc.string({ unit: "binary", maxLength: TEN_KB }), mutatedQr),
        fc.double(),
        (s, now) => {
          const v = verifyKhqr(s, now);
          const r = decodeKhqr(s);
          expect(typeof v).toBe("boolean");
          expect([0, 1]).toContain(r.status.code);
          expect(r.status.code === 0).toBe(r.status.errorCode === null && r.status.message === null);
          if (r.status.code !== 0) expect(v).toBe(false);
          expect(Object.keys(r.data).slice(0, 11)).toEqual([
            "merchantType",
            "bankAccountID",
            "merchantID",
            "acquiringBank",
            "merchantCategoryCode",
            "transactionCurrency",
            "transactionAmount",
            "countryCode",
            "merchantName",
            "merchantCity",
            "crc",
          ]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("answers within 1 ms per string, also on the strings on which the SDK's decode never returns", () => {
    const known = [...buildCorpus(Date.now()).map((e) => e.qr), ...WILD_VECTORS.map((v) => v.qr)];
    for (const s of known.slice(0, 50)) answerMs(s); // warm up the JIT
    const slow = known.filter((s) => answerMs(s) >= 1);
    expect(slow).toEqual([]);
    let hanging = 0;
    fc.assert(
      fc.property(fc.oneof(sdkHangQr, mutatedQr, codeUnits, bytes), (s) => {
        if (sdkDecodeHangs(s)) hanging++;
        expect(answerMs(s)).toBeLessThan(1);
      }),
      { numRuns: 400 },
    );
    expect(hanging).toBeGreaterThan(20);
  });

  it("survives a 10 KB valid-looking prefix, a QR repeated, and a QR with a 10 KB tail", () => {
    const { qr } = encodeKhqr(individualFull());
    for (const s of [
      qr.repeat(40),
      qr + "9".repeat(TEN_KB),
      "0".repeat(TEN_KB),
      qr.slice(0, -8) + "\ud800".repeat(TEN_KB),
    ]) {
      expect(verifyKhqr(s, 0)).toBe(false);
      expect(decodeKhqr(s).status.code).toBe(1);
    }
  });
});
