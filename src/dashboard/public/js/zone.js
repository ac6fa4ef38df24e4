// One clock for people: every time the dashboard shows is written in one zone, the one chosen in the header —
// Phnom Penh (the service's reporting zone, the overview's and the checkout's) unless this browser chose UTC or its
// own zone — and the zone is named wherever times are (docs/decisions/0253-one-clock-for-people.md). The choice is
// kept in localStorage: it is a preference of this browser, not a secret.

const STORE_KEY = "pqr.timeZone";
/** The service's reporting zone: the overview's periods and buckets, the export's bare dates, the checkout page. */
export const SERVICE_ZONE = "Asia/Phnom_Penh";
const BROWSER_ZONE = new Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/** The choices of the header's selector: [value, what it is called]. "local" is this browser's own zone. */
export const ZONE_CHOICES = [
  { value: SERVICE_ZONE, label: "Phnom Penh (UTC+7)" },
  { value: "UTC", label: "UTC" },
  { value: "local", label: `This browser (${BROWSER_ZONE})` },
];

function readChoice() {
  try {
    const v = window.localStorage.getItem(STORE_KEY);
    return ZONE_CHOICES.some((c) => c.value === v) ? v : SERVICE_ZONE;
  } catch {
    return SERVICE_ZONE;
  }
}

let choice = readChoice();
let formats = null;

/** The selector's value: a zone name, or "local". */
export const zoneChoice = () => choice;

/** The IANA zone times are written in now. */
export const displayZone = () => (choice === "local" ? BROWSER_ZONE : choice);

/** How the zone is named next to times: "Phnom Penh", "UTC", or the browser's zone name. */
export function zoneName() {
  const z = displayZone();
  return z === SERVICE_ZONE ? "Phnom Penh" : z === "UTC" ? "UTC" : z.replace(/_/g, " ");
}

/** A new choice: kept for this browser, and announced so the shell shows the page again in it. */
export function setZoneChoice(value) {
  if (!ZONE_CHOICES.some((c) => c.value === value) || value === choice) return;
  choice = value;
  formats = null;
  try {
    window.localStorage.setItem(STORE_KEY, value);
  } catch {
    /* private mode: the choice holds until the page is left */
  }
  window.dispatchEvent(new CustomEvent("pqr:zone", { detail: value }));
}

function formatters() {
  const timeZone = displayZone();
  formats ??= {
    // "28 Nov 2026, 18:13:27": day, month and 24-hour time, the same on every browser.
    dateTime: new Intl.DateTimeFormat("en-GB", {
      timeZone,
      dateStyle: "medium",
      timeStyle: "medium",
      hourCycle: "h23",
    }),
    hour: new Intl.DateTimeFormat("en-GB", { timeZone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }),
    parts: new Intl.DateTimeFormat("en-CA", {
      timeZone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
    }),
  };
  return formats;
}

/** An instant as the chosen zone writes it ("28 Nov 2026, 18:13:27"). */
export const formatInstant = (d) => formatters().dateTime.format(d);

/** An hour of the chosen zone ("18:00"). */
export const formatHour = (d) => formatters().hour.format(d);

/** The chosen zone's wall clock at `t` (epoch ms) as epoch ms read as if UTC: its offset is the difference. */
function wallClock(t) {
  const p = Object.fromEntries(
    formatters()
      .parts.formatToParts(new Date(t))
      .map((x) => [x.type, x.value]),
  );
  return Date.UTC(
    Number(p.year),
    Number(p.month) - 1,
    Number(p.day),
    Number(p.hour),
    Number(p.minute),
    Number(p.second),
  );
}

/** "2026-11-28" (a day of the chosen zone) → that day's first instant there, in epoch ms (daylight saving included). */
export function midnightOf(date) {
  const [y, m, d] = date.split("-").map(Number);
  const guess = Date.UTC(y, m - 1, d);
  // The zone's offset near that day, then again at the instant found (a change of offset that night moves it).
  let t = guess - (wallClock(guess) - guess);
  t = guess - (wallClock(t) - t);
  return t;
}

/** The chosen zone's day holding `t` (epoch ms): "2026-11-28". */
export function dayOf(t) {
  return new Date(wallClock(t)).toISOString().slice(0, 10);
}
