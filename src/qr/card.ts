import QRCode from "qrcode";
import { Resvg } from "@resvg/resvg-js";
import { decodeKhqr } from "../khqr/index.js";
import { groupedAmount } from "../money/money.js";

/**
 * The national KHQR card (issue 20): a red header with the KHQR mark and a folded corner, the merchant name,
 * the amount in bold with its currency, a dashed divider, and the QR (error correction H) with the currency
 * mark in its centre; portrait 2:3. Drawn as SVG from the stored QR string; the PNG is that SVG rasterised
 * (resvg, system fonts).
 */

/** The card guideline's colours. */
const RED = "#E1232E";
const DARK_RED = "#A9141D";
const INK = "#000000";
const MUTED = "#6B6B6B";
const DIVIDER = "#BDBDBD";

const WIDTH = 360;
const HEIGHT = 540;
const HEADER = 76;
const FOLD = 28;

/**
 * The guideline's facts the hosted checkout page draws too (src/checkout/public/checkout.css, in CSS: a test holds
 * the two equal), so the card on screen and the card as an image are one design.
 */
export const CARD_DESIGN = {
  red: RED,
  darkRed: DARK_RED,
  muted: MUTED,
  divider: DIVIDER,
  headerPx: HEADER,
  foldPx: FOLD,
} as const;
const QR_SIZE = 264;
const QR_TOP = 236;

export interface CardFacts {
  qr: string;
  merchantName: string;
  /** Exact decimal text. */
  amount: string;
  currency: "USD" | "KHR";
}

/** The facts printed on the card, read from the QR string itself (what the payer's app will show). */
export function cardFacts(qr: string, fallback: { amount: string; currency: "USD" | "KHR" }): CardFacts {
  const decoded = decodeKhqr(qr);
  const data = decoded.data as unknown as Record<string, unknown>;
  const name = typeof data.merchantName === "string" ? data.merchantName : "";
  const currency = data.transactionCurrency === "116" ? "KHR" : data.transactionCurrency === "840" ? "USD" : null;
  const amount = typeof data.transactionAmount === "string" ? data.transactionAmount : null;
  return {
    qr,
    merchantName: name,
    amount: amount ?? fallback.amount,
    currency: currency ?? fallback.currency,
  };
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function renderCardSvg(facts: CardFacts): string {
  const qr = QRCode.create(facts.qr, { errorCorrectionLevel: "H" });
  const n = qr.modules.size;
  const quiet = 2;
  const cell = QR_SIZE / (n + 2 * quiet);
  const x0 = (WIDTH - QR_SIZE) / 2;
  let modules = "";
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      if (!qr.modules.get(r, c)) continue;
      const [x, y, w] = [x0 + (c + quiet) * cell, QR_TOP + (r + quiet) * cell, cell].map((v) => v.toFixed(2));
      modules += `M${x} ${y}h${w}v${w}h-${w}z`;
    }
  }
  const cx = WIDTH / 2;
  const cy = QR_TOP + QR_SIZE / 2;
  const mark = facts.currency === "USD" ? "$" : "៛";
  const name = escapeXml(facts.merchantName.slice(0, 40));
  const font = "DejaVu Sans, Arial, Helvetica, sans-serif";
  const text = (x: number | string, y: number | string, size: number | string, more: string) =>
    `<text x="${x}" y="${y}" font-family="${font}" font-size="${size}" ${more}>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}">
<rect width="${WIDTH}" height="${HEIGHT}" rx="18" fill="#FFFFFF"/>
<path d="M18 0H${WIDTH - FOLD}L${WIDTH} ${FOLD}V${HEADER}H0V18A18 18 0 0 1 18 0Z" fill="${RED}"/>
<path d="M${WIDTH - FOLD} 0V${FOLD}H${WIDTH}Z" fill="${DARK_RED}"/>
${text(cx, HEADER / 2 + 11, 30, 'text-anchor="middle" font-weight="bold" fill="#FFFFFF"')}KHQR</text>
${text(28, HEADER + 44, 17, `fill="${MUTED}"`)}${name}</text>
${text(28, HEADER + 92, 34, `font-weight="bold" fill="${INK}"`)}${escapeXml(
    groupedAmount(facts.amount, facts.currency),
  )}<tspan dx="8" font-size="17" font-weight="normal" fill="${MUTED}">${facts.currency}</tspan></text>
<line x1="0" y1="${QR_TOP - 24}" x2="${WIDTH}" y2="${QR_TOP - 24}" stroke="${DIVIDER}" stroke-width="2"
 stroke-dasharray="8 6"/>
<path d="${modules}" fill="${INK}"/>
<circle cx="${cx}" cy="${cy}" r="${(cell * 3.4).toFixed(2)}" fill="#FFFFFF"/>
<circle cx="${cx}" cy="${cy}" r="${(cell * 2.7).toFixed(2)}" fill="${INK}"/>
${text(cx, (cy + cell * 1.4).toFixed(2), (cell * 3.6).toFixed(1), 'text-anchor="middle" font-weight="bold" fill="#FFFFFF"')}${mark}</text>
</svg>`;
}

export function renderCardPng(svg: string): Buffer {
  const resvg = new Resvg(svg, {
    fitTo: { mode: "width", value: WIDTH * 2 },
    font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans" },
    background: "#FFFFFF",
  });
  return Buffer.from(resvg.render().asPng());
}
