// The live transactions table: one page from the `transactions` connection, kept current by the
// `transactionUpdates` subscription (all areas, all merchants for the admin token), with filters.
import { gql, onConnection, subscribe } from "../api.js";
import { AREA_LABELS, cellContent, fill, fmtAmount, h, shortId, statusBadge, timeEl } from "../dom.js";
import { areaFilter, field, values } from "../form.js";
import { midnightOf, zoneName } from "../zone.js";
import { referenceSelection, referenceText, referenceValues, searchLabel, searchedValues } from "../area-fields.js";

// The areas' reference fields are known once config.json is read (area-fields.js): the queries are made then.
const page = () => {
  const node = `id area status latePayment amount currency ${referenceSelection(false)} createdAt updatedAt
    mismatch { resolution { action } }`;
  return `query($first: Int!, $after: String, $filter: TransactionFilter) {
  transactions(first: $first, after: $after, filter: $filter) { edges { node { ${node} } } pageInfo { hasNextPage endCursor } } }`;
};
const live = () => `subscription { transactionUpdates { id type transaction { transactionId area status late amount
  currency ${referenceSelection(true)} createdAt updatedAt mismatch { resolution { action } } } } }`;
const STATUSES = ["PENDING", "CHECKOUT", "SUCCESS", "FAILED", "EXPIRED"];
/** The status filter's extra choice: payments held because what arrived is not what was asked (any status). */
const HELD = "HELD";
const isHeld = (mismatch) => Boolean(mismatch) && !mismatch.resolution;
const PAGE_SIZE = 25;

const fromSnapshot = (s) => ({
  id: s.transactionId,
  area: s.area,
  status: s.status,
  latePayment: s.late === true,
  held: isHeld(s.mismatch),
  amount: s.amount,
  currency: s.currency,
  ...referenceValues(s),
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
});
/** Newest first, id breaking ties: the connection's own order. */
const before = (a, b) =>
  a.createdAt === b.createdAt ? a.id > b.id : Date.parse(a.createdAt) > Date.parse(b.createdAt);

class TransactionsPage extends HTMLElement {
  connectedCallback() {
    this.rows = [];
    this.trs = new Map();
    this.pending = [];
    this.loaded = false;
    this.filter = {};
    this.tbody = h("tbody");
    this.more = h(
      "button",
      { type: "button", class: "secondary", hidden: true, onclick: () => this.load(true) },
      "Load more",
    );
    this.liveState = h("span", { class: "live-state", role: "status" }, "Connecting…");
    fill(
      this,
      h("div", { class: "section-head" }, h("h1", { tabindex: "-1" }, "Transactions"), this.liveState),
      this.filtersForm(),
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "cards live-table" },
          h("caption", {}, `All areas, newest first, times in ${zoneName()} time; updates arrive live`),
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              [`Created (${zoneName()})`, "Transaction", "Area", "Status", "Amount", "Reference"].map((c) =>
                h("th", { scope: "col" }, c),
              ),
            ),
          ),
          this.tbody,
        ),
      ),
      h("p", { class: "more" }, this.more),
    );
    this.followLive();
    void this.load(false);
  }

  filtersForm() {
    const form = h(
      "form",
      { class: "filters", "aria-label": "Filter transactions" },
      areaFilter(),
      field({
        name: "status",
        label: "Status",
        options: [
          { value: "", label: "Any status" },
          ...STATUSES.map((s) => ({ value: s, label: s })),
          { value: HELD, label: "Held payments" },
        ],
      }),
      field({ name: "from", label: `From (${zoneName()} date)`, type: "date" }),
      field({ name: "to", label: "To (inclusive)", type: "date" }),
      field({
        name: "search",
        label: searchLabel(),
        type: "search",
        help: "Exact, or the first characters",
      }),
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Apply")),
    );
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      this.applyFilters(form);
    });
    // Selects and dates apply at once; the search box on Enter or Apply.
    form.addEventListener("change", (ev) => {
      if (ev.target.name !== "search") this.applyFilters(form);
    });
    return form;
  }

  followLive() {
    this.offConnection = onConnection((state) => {
      this.liveState.textContent =
        state === "live" ? "● Live" : state === "connecting" ? "Connecting…" : "Offline, retrying…";
      this.liveState.dataset.state = state;
      // Each time the subscription is (re)established, reload: events from before it started are not replayed.
      if (state === "live" && this.loaded) void this.load(false);
    });
    this.stop = subscribe(
      live(),
      {},
      {
        next: (data) => this.onEvent(fromSnapshot(data.transactionUpdates.transaction)),
        error: (err) => {
          this.liveState.textContent = `Live updates unavailable: ${err.message}`;
        },
      },
    );
  }

  disconnectedCallback() {
    this.stop?.();
    this.offConnection?.();
  }

  applyFilters(form) {
    const v = values(form);
    // Whole days of the zone the page writes times in: the first instant of `d` there, or of the day after it.
    const day = (d, plus = 0) => {
      const next = plus === 0 ? d : new Date(Date.parse(`${d}T12:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
      return new Date(midnightOf(next)).toISOString();
    };
    this.filter = {
      area: v.area || undefined,
      status: v.status && v.status !== HELD ? v.status : undefined,
      mismatched: v.status === HELD ? true : undefined,
      search: v.search.trim() || undefined,
      createdFrom: v.from ? day(v.from) : undefined,
      createdTo: v.to ? day(v.to, 1) : undefined,
    };
    void this.load(false);
  }

  async load(more) {
    this.more.disabled = true;
    // Filters may change while a page is on its way: only the latest request's answer counts.
    const ticket = (this.ticket = (this.ticket ?? 0) + 1);
    try {
      const { transactions } = await gql(page(), {
        first: PAGE_SIZE,
        after: more ? this.endCursor : null,
        filter: this.filter,
      });
      if (ticket !== this.ticket) return;
      const nodes = transactions.edges.map((e) => ({ ...e.node, held: isHeld(e.node.mismatch) }));
      this.rows = more ? [...this.rows, ...nodes.filter((n) => !this.rows.some((r) => r.id === n.id))] : nodes;
      this.endCursor = transactions.pageInfo.endCursor;
      this.hasNextPage = transactions.pageInfo.hasNextPage;
      this.loaded = true;
      for (const r of this.pending.splice(0)) this.upsert(r);
      this.render();
    } catch (err) {
      if (ticket === this.ticket)
        fill(this.tbody, h("tr", {}, h("td", { colspan: "6", class: "form-error" }, err.message)));
    } finally {
      this.more.disabled = false;
      this.more.hidden = !this.hasNextPage;
    }
  }

  matches(r) {
    const f = this.filter;
    if (f.area && r.area !== f.area) return false;
    if (f.status && r.status !== f.status) return false;
    if (f.mismatched && !r.held) return false;
    if (f.createdFrom && Date.parse(r.createdAt) < Date.parse(f.createdFrom)) return false;
    if (f.createdTo && Date.parse(r.createdAt) >= Date.parse(f.createdTo)) return false;
    if (f.search && ![r.id, ...searchedValues(r)].some((v) => v && v.startsWith(f.search))) return false;
    return true;
  }

  onEvent(row) {
    if (!this.loaded) return void this.pending.push(row);
    this.upsert(row);
    this.render(row.id);
  }

  /** Newer state replaces older; a row that stops matching the filters leaves; a new one takes its place in order. */
  upsert(row) {
    const i = this.rows.findIndex((r) => r.id === row.id);
    if (i >= 0 && Date.parse(this.rows[i].updatedAt) > Date.parse(row.updatedAt)) return;
    if (i >= 0) this.rows.splice(i, 1);
    if (!this.matches(row)) return;
    const last = this.rows.at(-1);
    if (this.hasNextPage && last && before(last, row)) return; // belongs to a later page
    const at = this.rows.findIndex((r) => before(row, r));
    this.rows.splice(at < 0 ? this.rows.length : at, 0, row);
  }

  /** Keyed rendering: rows keep their elements (and focus) across updates. */
  render(changedId) {
    if (this.rows.length === 0) {
      this.trs.clear();
      return fill(
        this.tbody,
        h(
          "tr",
          {},
          h("td", { colspan: "6", class: "empty" }, "No transactions match. New ones appear here as they are created."),
        ),
      );
    }
    this.tbody.querySelector("td.empty")?.parentElement.remove();
    const keep = new Set(this.rows.map((r) => r.id));
    for (const [id, tr] of this.trs) {
      if (keep.has(id)) continue;
      tr.remove();
      this.trs.delete(id);
    }
    let prev = null;
    for (const r of this.rows) {
      const sig = `${r.status}|${r.updatedAt}|${r.held}`;
      let tr = this.trs.get(r.id);
      if (!tr || tr.dataset.sig !== sig) {
        const fresh = this.rowElement(r, sig);
        if (tr) tr.replaceWith(fresh);
        tr = fresh;
        this.trs.set(r.id, tr);
        if (r.id === changedId) tr.classList.add("flash");
      }
      const want = prev ? prev.nextSibling : this.tbody.firstChild;
      if (want !== tr) this.tbody.insertBefore(tr, want);
      prev = tr;
    }
  }

  rowElement(r, sig) {
    const cell = (label, ...content) => h("td", { "data-label": label }, cellContent(content));
    return h(
      "tr",
      { dataset: { id: r.id, status: r.status, sig } },
      cell(`Created (${zoneName()})`, timeEl(r.createdAt)),
      cell("Transaction", h("a", { href: `#/transactions/${r.id}`, title: r.id }, shortId(r.id))),
      cell("Area", AREA_LABELS[r.area] ?? r.area),
      cell(
        "Status",
        statusBadge(r.status),
        r.latePayment
          ? h(
              "span",
              { class: "badge late", title: "Paid after the expiry or seen after it: reconcile" },
              "late payment",
            )
          : "",
        r.held
          ? h(
              "span",
              {
                class: "badge held",
                title: "Money arrived that is not what was asked: open it to accept it as paid or mark it failed",
              },
              "held: not what was asked",
            )
          : "",
      ),
      cell("Amount", fmtAmount(r.amount, r.currency)),
      cell("Reference", h("span", { class: "wrap" }, referenceText(r))),
    );
  }
}

customElements.define("pqr-transactions", TransactionsPage);
