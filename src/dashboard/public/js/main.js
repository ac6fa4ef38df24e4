// The dashboard shell: sign-in gate, navigation, hash routes (#/overview, the default; #/transactions,
// #/transactions/<id>, #/merchants, …).
import { dashboardConfig, gql, session } from "./api.js";
import { clearAnnouncement, fill, h, setAreas } from "./dom.js";
import { setZoneChoice, zoneChoice, ZONE_CHOICES } from "./zone.js";
import "./pages/signin.js";
import "./pages/overview.js";
import "./pages/transactions.js";
import "./pages/transaction-detail.js";
import "./pages/merchants.js";
import "./pages/configs.js";
import "./pages/keys.js";
import "./pages/webhooks.js";

const NAV = [
  ["overview", "Overview"],
  ["transactions", "Transactions"],
  ["merchants", "Merchants"],
  ["configs", "Configurations"],
  ["keys", "API keys"],
  ["webhooks", "Webhooks"],
];

function route() {
  const [, section = "overview", id] = location.hash.replace(/^#/, "").split("/");
  return {
    section: NAV.some(([s]) => s === section) ? section : "overview",
    id: id ? decodeURIComponent(id) : null,
  };
}

class App extends HTMLElement {
  connectedCallback() {
    window.addEventListener("pqr:session", () => this.render());
    window.addEventListener("hashchange", () => this.show());
    // Another zone chosen: the page is shown again, every time on it written in that zone.
    window.addEventListener("pqr:zone", () => this.show());
    this.render();
  }

  render() {
    if (session.token === null) {
      fill(this, h("pqr-signin"), announcer());
      return;
    }
    this.nav = h(
      "ul",
      {},
      NAV.map(([s, label]) => h("li", {}, h("a", { href: `#/${s}`, dataset: { section: s } }, label))),
    );
    this.demo = h("span", { class: "demo-flag", hidden: true }, "Demo mode: simulators on");
    this.main = h("main", { id: "main", tabindex: "-1" });
    // From 14 days before the network API token expires (and after): what to do, above every page.
    this.tokenWarning = h("p", { class: "banner warning", role: "alert", hidden: true });
    fill(
      this,
      h(
        "a",
        { class: "skip", href: "#main", onclick: (ev) => (ev.preventDefault(), this.main.focus()) },
        "Skip to content",
      ),
      h(
        "header",
        { class: "top" },
        h("span", { class: "brand" }, "Payment QR"),
        h("nav", { "aria-label": "Main" }, this.nav),
        this.demo,
        zoneSelector(),
        h("button", { type: "button", class: "secondary sign-out", onclick: () => session.signOut() }, "Sign out"),
      ),
      this.tokenWarning,
      this.main,
      announcer(),
    );
    void gql("query { networkToken { warning } }").then(
      (d) => {
        const warning = d?.networkToken?.warning ?? null;
        this.tokenWarning.textContent = warning ?? "";
        this.tokenWarning.hidden = warning === null;
      },
      () => undefined,
    );
    void dashboardConfig().then((c) => {
      this.demo.hidden = !c.simulators;
    });
    this.show();
  }

  show() {
    if (!this.main) return;
    const { section, id } = route();
    for (const a of this.nav.querySelectorAll("a")) {
      if (a.dataset.section === section) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    }
    const page = section === "transactions" && id ? h("pqr-transaction", { "tx-id": id }) : h(`pqr-${section}`);
    clearAnnouncement();
    fill(this.main, page);
    document.title = `${NAV.find(([s]) => s === section)[1]} · Payment QR dashboard`;
    // Move focus to the new page's heading once it has rendered, so keyboard and screen-reader users land there.
    setTimeout(() => (this.main.querySelector("h1") ?? this.main).focus(), 0);
  }
}

/** The header's "Times in" choice: the zone every time on every page is written in (zone.js). */
function zoneSelector() {
  const select = h(
    "select",
    { id: "time-zone", name: "timeZone", onchange: (ev) => setZoneChoice(ev.currentTarget.value) },
    ZONE_CHOICES.map((c) => h("option", { value: c.value, selected: c.value === zoneChoice() }, c.label)),
  );
  return h("label", { class: "zone-choice" }, h("span", {}, "Times in"), select);
}

function announcer() {
  return h("div", { id: "announcer", class: "announcer", role: "status", "aria-live": "polite" });
}

// The pages name the areas the server has: known before the first page renders.
void dashboardConfig().then((c) => {
  setAreas(c.areas ?? []);
  customElements.define("pqr-app", App);
});
