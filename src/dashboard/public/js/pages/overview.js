// The overview, the dashboard's first page: what happened to the payments created in a period — figure tiles, a
// chart of the paid amount and one of the counts by status per hour or day, by merchant and by area, webhook health.
// Charts are drawn by Chart.js, served by the dashboard itself (/dashboard/vendor/chart.js/); every chart has a text
// alternative (a summary as its label and the same figures as a table for screen readers).
import { gql, session } from "../api.js";
import { announce, AREA_LABELS, fill, h, shortId, table } from "../dom.js";
import { areaFilter, field } from "../form.js";
import { formatMoney } from "../money.js";
import { OVERVIEW_QUERY as QUERY } from "../overview-query.js";
import { formatHour, zoneName } from "../zone.js";

/**
 * The service's bucket time zone (Overview.timeZone): Phnom Penh, UTC+7 all year. Periods and day buckets are its
 * local days, whatever zone the header chose; an hour bucket is labelled in the chosen zone (zone.js), the hours
 * of UTC and Phnom Penh being the same instants (docs/decisions/0253-one-clock-for-people.md).
 */
const ZONE = "Asia/Phnom_Penh";
const ZONE_OFFSET = "+07:00";
const DAY = 86_400_000;

const PERIODS = [
  { value: "today", label: "Today", days: 1 },
  { value: "7d", label: "Last 7 days", days: 7 },
  { value: "30d", label: "Last 30 days", days: 30 },
  { value: "custom", label: "Custom dates" },
];

const CURRENCY_COLORS = { USD: "#0b5cad", KHR: "#b54708" };
const STATUS_SERIES = [
  { key: "paid", label: "Paid", color: "#067647" },
  { key: "failed", label: "Failed", color: "#b42318" },
  { key: "expired", label: "Expired", color: "#8a5300" },
  { key: "pending", label: "Pending", color: "#667085" },
];

const localDay = new Intl.DateTimeFormat("en-CA", {
  timeZone: ZONE,
  year: "numeric",
  month: "2-digit",
  day: "2-digit",
});
const dayLabel = new Intl.DateTimeFormat("en-GB", { timeZone: ZONE, day: "numeric", month: "short" });

/** "2026-11-25" (a Phnom Penh date) → that day's midnight there, in epoch ms. */
const midnight = (date) => Date.parse(`${date}T00:00:00${ZONE_OFFSET}`);
const count = (n) => Number(n).toLocaleString("en-US");
const pct = (r) => (r === null || r === undefined ? "—" : `${(r * 100).toFixed(1)}%`);

let chartJs = null;
/** Chart.js's one-file build, loaded when the first chart is drawn (it sets globalThis.Chart). */
function loadChartJs() {
  chartJs ??= import("../../vendor/chart.js/chart.umd.min.js").then(() => globalThis.Chart);
  return chartJs;
}

class OverviewPage extends HTMLElement {
  connectedCallback() {
    this.charts = [];
    this.seq = 0;
    this.form = this.filtersForm();
    this.body = h(
      "div",
      { class: "overview-body", "aria-live": "polite", "aria-busy": "true" },
      h("p", {}, "Loading…"),
    );
    fill(this, h("div", { class: "section-head" }, h("h1", { tabindex: "-1" }, "Overview")), this.form, this.body);
    void this.loadMerchants();
    void this.load();
  }

  disconnectedCallback() {
    this.destroyCharts();
  }

  filtersForm() {
    const today = localDay.format(new Date());
    const form = h(
      "form",
      { class: "filters overview-filters", "aria-label": "Overview period and filters" },
      field({ name: "period", label: "Period", options: PERIODS, value: "today" }),
      field({ name: "from", label: "From (Phnom Penh date)", type: "date", value: today }),
      field({ name: "to", label: "To (inclusive)", type: "date", value: today }),
      field({ name: "merchantId", label: "Merchant", options: [{ value: "", label: "All merchants" }] }),
      areaFilter(),
      h(
        "button",
        {
          type: "button",
          class: "secondary export",
          onclick: (ev) => void this.exportCsv(ev.currentTarget),
          title: "One row per transaction of this period and these filters (the reconciliation export)",
        },
        "Export CSV",
      ),
      h("p", { class: "form-error", role: "alert" }),
    );
    this.customFields(form);
    form.addEventListener("change", () => {
      this.customFields(form);
      void this.load();
    });
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      void this.load();
    });
    return form;
  }

  /** The date fields only for custom dates. */
  customFields(form) {
    const custom = form.elements.period.value === "custom";
    for (const name of ["from", "to"]) form.querySelector(`[data-field="${name}"]`).hidden = !custom;
  }

  async loadMerchants() {
    try {
      const { merchants } = await gql("{ merchants { id name } }");
      const select = this.form.elements.merchantId;
      for (const m of merchants) select.append(h("option", { value: m.id }, m.name));
    } catch {
      /* the filter stays at "All merchants"; the figures still load */
    }
  }

  /** The period as [from, to) instants: whole Phnom Penh days, today included. */
  range() {
    const f = this.form.elements;
    const period = PERIODS.find((p) => p.value === f.period.value) ?? PERIODS[0];
    if (period.value !== "custom") {
      const end = midnight(localDay.format(new Date())) + DAY;
      return { from: end - period.days * DAY, to: end };
    }
    if (!f.from.value || !f.to.value) return { error: "Choose both dates." };
    const from = midnight(f.from.value);
    const to = midnight(f.to.value) + DAY;
    if (to <= from) return { error: "The end date is before the start date." };
    return { from, to };
  }

  /** The reconciliation export of what the overview shows, saved as a file (fetched with the admin token). */
  async exportCsv(button) {
    const error = this.form.querySelector(".form-error");
    const r = this.range();
    if (r.error) return void (error.textContent = r.error);
    const f = this.form.elements;
    const params = new URLSearchParams({ from: new Date(r.from).toISOString(), to: new Date(r.to).toISOString() });
    if (f.merchantId.value) params.set("merchantId", f.merchantId.value);
    if (f.area.value) params.set("area", f.area.value);
    button.disabled = true;
    try {
      const res = await fetch(`/admin/export/transactions.csv?${params}`, {
        headers: { authorization: `Bearer ${session.token}` },
      });
      if (!res.ok) {
        const body = await res.json().catch(() => ({}));
        throw new Error(body?.error?.message ?? `HTTP ${res.status}`);
      }
      const name = /filename="([^"]+)"/.exec(res.headers.get("content-disposition") ?? "")?.[1] ?? "transactions.csv";
      const url = URL.createObjectURL(await res.blob());
      const a = h("a", { href: url, download: name, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      announce(`Exported ${name}`);
    } catch (err) {
      error.textContent = `Export failed: ${err.message}`;
    } finally {
      button.disabled = false;
    }
  }

  async load() {
    const seq = ++this.seq;
    const error = this.form.querySelector(".form-error");
    error.textContent = "";
    const r = this.range();
    if (r.error) {
      error.textContent = r.error;
      return;
    }
    const f = this.form.elements;
    const variables = {
      from: new Date(r.from).toISOString(),
      to: new Date(r.to).toISOString(),
      merchantId: f.merchantId.value || null,
      area: f.area.value || null,
    };
    this.body.setAttribute("aria-busy", "true");
    try {
      const [{ overview }, Chart] = await Promise.all([gql(QUERY, variables), loadChartJs()]);
      if (seq !== this.seq) return; // a newer period was asked for meanwhile
      this.render(overview, Chart);
      Object.assign(this.dataset, { from: variables.from, to: variables.to });
    } catch (err) {
      if (seq !== this.seq) return;
      const detail = err.details?.[0]?.message;
      error.textContent = detail ? `${err.message}: ${detail}` : err.message;
    } finally {
      if (seq === this.seq) this.body.setAttribute("aria-busy", "false");
    }
  }

  destroyCharts() {
    for (const c of this.charts ?? []) c.destroy();
    this.charts = [];
  }

  /** The period's figures: tiles, the two charts with their tables, the tables by merchant and area, webhooks. */
  render(o, Chart) {
    this.destroyCharts();
    const b = buckets(o);
    const moneyChart = this.chartFigure(
      "paid-amount",
      `Paid amount per ${b.unit} (${b.zone})`,
      `Paid amount per ${b.unit}: ${o.currencies.map((c) => formatMoney(c.paidAmount, c.currency)).join(", ")} in total.`,
      ["Start", ...o.currencies.map((c) => `Paid ${c.currency}`)],
      b.starts.map((s, i) => [b.label(s), ...o.currencies.map((c) => formatMoney(c.series[i].paidAmount, c.currency))]),
    );
    const statusTotals = STATUS_SERIES.map((s) => `${count(o.totals[s.key])} ${s.label.toLowerCase()}`).join(", ");
    const countChart = this.chartFigure(
      "status-counts",
      `Payments by status per ${b.unit} (all currencies)`,
      `Payments by status per ${b.unit}: ${statusTotals} in total.`,
      ["Start", ...STATUS_SERIES.map((s) => s.label)],
      b.starts.map((s, i) => [b.label(s), ...STATUS_SERIES.map((st) => count(b.perBucket(st.key, i)))]),
    );
    fill(
      this.body,
      h(
        "p",
        { class: "lead" },
        `Payments created in the period (whole Phnom Penh days, ${o.timeZone}), per ${b.unit}` +
          (b.unit === "hour" ? `; hours in ${zoneName()} time.` : "."),
      ),
      figureTiles(o),
      h("div", { class: "charts" }, moneyChart.figure, countChart.figure),
      groupTables(o),
      h("h2", {}, "Webhooks"),
      webhookTiles(o),
    );
    // Drawn once the canvases are in the page: Chart.js sizes a chart from its box.
    this.charts.push(paidAmountChart(Chart, moneyChart.canvas, o, b), statusCountChart(Chart, countChart.canvas, b));
  }

  /** A chart's figure: the canvas labelled by a summary, and its figures as a table only screen readers see. */
  chartFigure(name, caption, summary, head, rows) {
    const canvas = h("canvas", { role: "img", "aria-label": summary });
    const figure = h(
      "figure",
      { class: "chart", dataset: { chart: name } },
      h("figcaption", {}, caption),
      h("div", { class: "chart-box" }, canvas),
      // In a wrapper: a table is never narrower than its content, so the wrapper is what is hidden.
      h(
        "div",
        { class: "visually-hidden" },
        h(
          "table",
          {},
          h("caption", {}, caption),
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              head.map((c) => h("th", { scope: "col" }, c)),
            ),
          ),
          h(
            "tbody",
            {},
            rows.map((r) =>
              h(
                "tr",
                {},
                r.map((c, i) => (i === 0 ? h("th", { scope: "row" }, c) : h("td", {}, c))),
              ),
            ),
          ),
        ),
      ),
    );
    return { figure, canvas };
  }
}

/**
 * The period's time axis: the bucket's unit ("hour" or "day"), a bucket's label (an hour in the chosen zone, a
 * Phnom Penh day), what zone the labels are in, the buckets' starts, and how many payments of one status a bucket
 * holds across currencies.
 */
function buckets(o) {
  return {
    unit: o.bucket === "HOUR" ? "hour" : "day",
    label: (iso) => (o.bucket === "HOUR" ? formatHour : (d) => dayLabel.format(d))(new Date(iso)),
    zone: o.bucket === "HOUR" ? `${zoneName()} time` : "Phnom Penh days",
    starts: o.currencies[0].series.map((p) => p.start),
    perBucket: (key, i) => o.currencies.reduce((sum, c) => sum + c.series[i].counts[key], 0),
  };
}

/** The headline figures: payments, paid per currency, success rate, and the unfinished or late ones. */
function figureTiles(o) {
  return h(
    "ul",
    { class: "tiles", "aria-label": "Figures" },
    tile("payments", "Payments", o.totals.payments, count(o.totals.payments)),
    o.currencies.map((c) =>
      tile(
        `paid-${c.currency}`,
        `Paid ${c.currency}`,
        c.paidAmount,
        formatMoney(c.paidAmount, c.currency),
        `${count(c.counts.paid)} paid`,
      ),
    ),
    tile(
      "success-rate",
      "Success rate",
      o.totals.successRate ?? "",
      pct(o.totals.successRate),
      `paid of ${count(o.totals.finished)} finished`,
    ),
    tile("failed", "Failed", o.totals.failed, count(o.totals.failed)),
    tile("expired", "Expired", o.totals.expired, count(o.totals.expired)),
    tile("pending", "Pending", o.totals.pending, count(o.totals.pending)),
    tile("late", "Late payments", o.totals.late, count(o.totals.late), "paid after expiry: reconcile"),
  );
}

/** The period's payments by merchant and by area. */
function groupTables(o) {
  return h(
    "div",
    { class: "overview-tables" },
    table(
      "By merchant",
      groupColumns("Merchant", (g) => [g.name ?? "—", " ", h("code", {}, shortId(g.id))]),
      o.merchants,
      "No payments in this period.",
    ),
    table(
      "By area",
      groupColumns("Area", (g) => AREA_LABELS[g.id] ?? g.id),
      o.areas,
      "No payments in this period.",
    ),
  );
}

/** Webhook health: deliveries by outcome, endpoints failing or disabled, and the p95 latency. */
function webhookTiles(o) {
  return h(
    "ul",
    { class: "tiles", "aria-label": "Webhook health" },
    tile("wh-delivered", "Delivered", o.webhooks.delivered, count(o.webhooks.delivered)),
    tile("wh-retrying", "Retrying", o.webhooks.retrying, count(o.webhooks.retrying)),
    tile("wh-failed", "Failed (gave up)", o.webhooks.failed, count(o.webhooks.failed)),
    tile("wh-failing", "Endpoints failing now", o.webhooks.failingEndpoints, count(o.webhooks.failingEndpoints)),
    tile("wh-disabled", "Endpoints disabled", o.webhooks.disabledEndpoints, count(o.webhooks.disabledEndpoints)),
    tile(
      "wh-p95",
      "p95 latency",
      o.webhooks.p95LatencyMs ?? "",
      o.webhooks.p95LatencyMs === null ? "—" : `${count(o.webhooks.p95LatencyMs)} ms`,
    ),
  );
}

/** A bar chart over the period's buckets, the same look for both charts. */
function barChart(Chart, canvas, b, datasets, scales) {
  return new Chart(canvas, {
    type: "bar",
    data: { labels: b.starts.map(b.label), datasets },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      interaction: { mode: "index", intersect: false },
      plugins: { legend: { position: "bottom" } },
      scales,
    },
  });
}

/** The paid amount per bucket: USD on the left axis, KHR on the right (their scales differ by thousands). */
function paidAmountChart(Chart, canvas, o, b) {
  const usd = o.currencies.find((c) => c.currency === "USD");
  const khr = o.currencies.find((c) => c.currency === "KHR");
  return barChart(
    Chart,
    canvas,
    b,
    [usd, khr].map((c) => ({
      label: `Paid ${c.currency}`,
      data: c.series.map((p) => Number(p.paidAmount)),
      backgroundColor: CURRENCY_COLORS[c.currency],
      yAxisID: c.currency,
    })),
    {
      x: { ticks: { autoSkip: true, maxRotation: 0 } },
      USD: { position: "left", beginAtZero: true, title: { display: true, text: "USD" } },
      KHR: {
        position: "right",
        beginAtZero: true,
        grid: { drawOnChartArea: false },
        title: { display: true, text: "KHR" },
      },
    },
  );
}

/** The payments per bucket, stacked by status. */
function statusCountChart(Chart, canvas, b) {
  return barChart(
    Chart,
    canvas,
    b,
    STATUS_SERIES.map((s) => ({
      label: s.label,
      data: b.starts.map((_, i) => b.perBucket(s.key, i)),
      backgroundColor: s.color,
    })),
    {
      x: { stacked: true, ticks: { autoSkip: true, maxRotation: 0 } },
      y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } },
    },
  );
}

/** One figure: its label, the value as shown, and the raw value (data-value) as the API gave it. */
function tile(name, label, raw, shown, note) {
  return h(
    "li",
    { class: "tile", dataset: { figure: name, value: String(raw) } },
    h("span", { class: "tile-label" }, label),
    h("span", { class: "tile-value" }, shown),
    note ? h("span", { class: "tile-note" }, note) : null,
  );
}

function groupColumns(label, name) {
  return [
    { label, cell: name },
    { label: "Payments", cell: (g) => count(g.counts.payments) },
    {
      label: "Paid",
      cell: (g) =>
        g.paid.length === 0
          ? "—"
          : h(
              "ul",
              { class: "plain" },
              g.paid.map((p) => h("li", {}, `${count(p.count)} · ${formatMoney(p.amount, p.currency)}`)),
            ),
    },
    { label: "Success rate", cell: (g) => pct(g.counts.successRate) },
  ];
}

customElements.define("pqr-overview", OverviewPage);
