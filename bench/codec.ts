// Codec speed: our src/khqr against the reference SDK (bakong-khqr) on the same work.
// Fairness: both sides rotate through the same 1000 distinct QR strings / inputs (1000 different
// amounts), so no side profits from caching a repeated string (the SDK's changelog mentions
// decode caching). Each figure is the median ops/s of 5 timed runs of N iterations after a
// warm-up of N iterations; N is calibrated per case so that one run takes about 200 ms. Runs of
// ours and of the SDK alternate, and time is the process's CPU time (user + system), so load from
// other processes on a shared machine shifts both sides alike instead of skewing the ratio.
// Run alone: npx tsc -p tsconfig.build.json && node dist/bench/codec.js
import sdk, { type MerchantInfo } from "bakong-khqr";
import { decodeKhqr, encodeKhqr, verifyKhqr, type KhqrInput } from "../src/khqr/index.js";
import { toMarkdown, type Section } from "./table.js";

export type Row = { name: string; ours: number; baseline: number; unit: string };

const DISTINCT = 1000;
const RUNS = 5;
const TARGET_MS = 200;

export type Work = (i: number) => number;
let sink = 0; // results feed this so the optimiser cannot drop the calls

/** CPU milliseconds for n iterations. */
function timeRun(fn: Work, n: number): number {
  const t0 = process.cpuUsage();
  for (let k = 0; k < n; k++) sink += fn(k % DISTINCT);
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / 1000;
}

/** N such that one run takes about TARGET_MS; the calibration doubles as the warm-up. */
function calibrate(fn: Work): number {
  let n = 1000;
  let ms = timeRun(fn, n);
  while (ms < TARGET_MS / 4 && n < 1e8) ms = timeRun(fn, (n *= 2));
  const calibrated = Math.max(1000, Math.round((n * TARGET_MS) / Math.max(ms, 1)));
  timeRun(fn, calibrated);
  return calibrated;
}

function median(xs: number[]): number {
  return Math.round([...xs].sort((a, b) => a - b)[xs.length >> 1]);
}

/** Median ops/s of ours and of the SDK, their runs interleaved. */
export function compare(name: string, ours: Work, baseline: Work): Row {
  const nOurs = calibrate(ours);
  const nBase = calibrate(baseline);
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    a.push((nOurs / timeRun(ours, nOurs)) * 1000);
    b.push((nBase / timeRun(baseline, nBase)) * 1000);
  }
  return { name, ours: median(a), baseline: median(b), unit: "ops/s" };
}

function amountOf(i: number): string {
  const cents = 100 + i * 7; // 1.00 … 70.93 USD, all distinct
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, "0")}`;
}

function fixtures(now: number): { inputs: KhqrInput[]; sdkInfos: MerchantInfo[]; qrs: string[] } {
  const inputs: KhqrInput[] = [];
  const sdkInfos: MerchantInfo[] = [];
  for (let i = 0; i < DISTINCT; i++) {
    const input: KhqrInput = {
      accountType: "merchant",
      bakongAccountId: "devit@abaa",
      merchantName: "Devit Coffee",
      merchantCity: "Battambang",
      merchantId: "1243546472",
      acquiringBank: "DEVBKKHPXXX",
      currency: 840,
      amount: amountOf(i),
      billNumber: `INV-${i}`,
      creationTimestamp: now,
      expirationTimestamp: now + 3_600_000,
    };
    inputs.push(input);
    sdkInfos.push(
      new sdk.MerchantInfo(input.bakongAccountId, input.merchantName, input.merchantCity, "1243546472", "DEVBKKHPXXX", {
        currency: 840,
        amount: Number(input.amount),
        billNumber: input.billNumber,
        expirationTimestamp: input.expirationTimestamp,
      }),
    );
  }
  return { inputs, sdkInfos, qrs: inputs.map((x) => encodeKhqr(x).qr) };
}

export async function benchCodec(): Promise<Row[]> {
  const now = Date.now();
  const { inputs, sdkInfos, qrs } = fixtures(now);
  const generator = new sdk.BakongKHQR();
  for (const qr of qrs) {
    if (!sdk.BakongKHQR.verify(qr).isValid || !verifyKhqr(qr, now)) throw new Error(`fixture does not verify: ${qr}`);
  }
  const rows: Row[] = [
    compare(
      "encode",
      (i) => encodeKhqr(inputs[i]).qr.length,
      (i) => generator.generateMerchant(sdkInfos[i]).data?.qr.length ?? 0,
    ),
    compare(
      "decode",
      (i) => decodeKhqr(qrs[i]).status.code,
      (i) => sdk.BakongKHQR.decode(qrs[i]).status.code,
    ),
    compare(
      "verify",
      (i) => (verifyKhqr(qrs[i], now) ? 1 : 0),
      (i) => (sdk.BakongKHQR.verify(qrs[i]).isValid ? 1 : 0),
    ),
  ];
  if (sink === -1) console.log(sink);
  return rows;
}

/** The codec section of `npm run bench`. */
export async function benchCodecSection(): Promise<Section> {
  const rows = await benchCodec();
  return {
    title: "KHQR codec: ours against the reference SDK (bakong-khqr 1.0.20)",
    columns: ["operation", "ours ops/s", "bakong-khqr ops/s", "ours / SDK"],
    rows: rows.map((r) => [r.name, r.ours, r.baseline, `${(r.ours / r.baseline).toFixed(1)}×`]),
    notes: [
      `Both sides rotate through the same ${DISTINCT} distinct QR strings / inputs; median of ${RUNS} runs of ~${TARGET_MS} ms each after a warm-up, runs of ours and of the SDK alternating.`,
      "Time is the process's CPU time (user + system), so load from other processes shifts both sides alike instead of skewing the ratio.",
    ],
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(toMarkdown(await benchCodecSection()));
}
