// One shape for every bench section, so `npm run bench` prints them alike and writes bench/results.md.
export interface Section {
  title: string;
  /** Column headers; by convention the baseline column sits right beside ours. */
  columns: string[];
  rows: (string | number)[][];
  /** How it was measured, targets and whether they were met: printed under the table. */
  notes?: string[];
}

function cell(v: string | number): string {
  if (typeof v === "string") return v;
  if (!Number.isFinite(v)) return String(v);
  return Number.isInteger(v) ? v.toLocaleString("en-US") : v.toLocaleString("en-US", { maximumFractionDigits: 2 });
}

/** A GitHub-flavoured markdown table (also readable as plain text in a terminal). */
export function toMarkdown(s: Section): string {
  const head = `| ${s.columns.join(" | ")} |`;
  const rule = `|${s.columns.map((_, i) => (i === 0 ? " --- " : " ---: ")).join("|")}|`;
  const body = s.rows.map((r) => `| ${r.map(cell).join(" | ")} |`);
  const notes = (s.notes ?? []).map((n) => `- ${n}`);
  return [`### ${s.title}`, "", head, rule, ...body, ...(notes.length ? ["", ...notes] : []), ""].join("\n");
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Nearest-rank percentile, p in [0, 100]. */
export function percentile(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
