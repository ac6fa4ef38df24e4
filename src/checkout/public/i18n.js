// The checkout's words in Khmer and English (the payers are in Cambodia), the choice between them, and how a time
// is written. Digits stay Latin in both (amounts, times, the countdown); times are Phnom Penh's.

export const LANGUAGES = ["km", "en"];

const STORE_KEY = "payment-qr-checkout.language";

/** Every string the checkout shows; both languages have exactly the same keys (a test holds them so). */
export const STRINGS = {
  en: {
    languageName: "English",
    languageSwitch: "Language",
    pageTitle: "Pay",
    pageTitleMerchant: "Pay {merchant}",
    loading: "Loading…",
    waiting: "Waiting for payment",
    scanHint: "Scan with any banking app that supports KHQR",
    scanned: "Scanned — confirm the payment in your app",
    reconnecting: "(reconnecting…)",
    paid: "Paid",
    paidNote: "Thank you — the payment was received.",
    failed: "Payment failed",
    failedNote: "The payment did not go through. Ask the merchant for a new QR code to try again.",
    expired: "Expired",
    expiredNote: "This QR code has expired: do not pay with it. Ask the merchant for a new one.",
    expiresIn: "Expires in {clock}",
    timeUp: "Time is up — checking…",
    openApp: "Open in your banking app",
    viewReceipt: "View receipt",
    backToShop: "Back to the shop",
    amountLabel: "Amount",
    paidAtLabel: "Paid on",
    referenceLabel: "Reference",
    fullReference: "Full reference",
    copy: "Copy",
    copied: "Copied",
    timeZoneNote: "Phnom Penh time",
    qrAlt: "Payment QR code",
    linkInvalid: "This payment link is not valid",
    linkIncomplete: "This payment link is not complete",
    loadFailed: "The payment could not be loaded — try again in a moment",
  },
  km: {
    languageName: "ខ្មែរ",
    languageSwitch: "ភាសា",
    pageTitle: "ការទូទាត់",
    pageTitleMerchant: "ទូទាត់ទៅ {merchant}",
    loading: "កំពុងផ្ទុក…",
    waiting: "កំពុងរង់ចាំការទូទាត់",
    scanHint: "ស្កេនដោយកម្មវិធីធនាគារណាមួយដែលគាំទ្រ KHQR",
    scanned: "បានស្កេនហើយ — សូមបញ្ជាក់ការទូទាត់នៅក្នុងកម្មវិធីរបស់អ្នក",
    reconnecting: "(កំពុងភ្ជាប់ឡើងវិញ…)",
    paid: "បានទូទាត់",
    paidNote: "សូមអរគុណ — ការទូទាត់ត្រូវបានទទួលហើយ។",
    failed: "ការទូទាត់បរាជ័យ",
    failedNote: "ការទូទាត់មិនបានសម្រេចទេ។ សូមស្នើសុំកូដ QR ថ្មីពីអ្នកលក់ ដើម្បីព្យាយាមម្តងទៀត។",
    expired: "ផុតកំណត់",
    expiredNote: "កូដ QR នេះផុតកំណត់ហើយ៖ សូមកុំទូទាត់ជាមួយវា។ សូមស្នើសុំកូដថ្មីពីអ្នកលក់។",
    expiresIn: "ផុតកំណត់ក្នុងរយៈពេល {clock}",
    timeUp: "អស់ពេលហើយ — កំពុងពិនិត្យ…",
    openApp: "បើកក្នុងកម្មវិធីធនាគាររបស់អ្នក",
    viewReceipt: "មើលបង្កាន់ដៃ",
    backToShop: "ត្រឡប់ទៅហាងវិញ",
    amountLabel: "ចំនួនទឹកប្រាក់",
    paidAtLabel: "ទូទាត់នៅ",
    referenceLabel: "លេខយោង",
    fullReference: "លេខយោងពេញ",
    copy: "ចម្លង",
    copied: "បានចម្លងហើយ",
    timeZoneNote: "ម៉ោងភ្នំពេញ",
    qrAlt: "កូដ QR សម្រាប់ទូទាត់",
    linkInvalid: "តំណទូទាត់នេះមិនត្រឹមត្រូវទេ",
    linkIncomplete: "តំណទូទាត់នេះមិនពេញលេញទេ",
    loadFailed: "មិនអាចផ្ទុកការទូទាត់បានទេ — សូមព្យាយាមម្តងទៀតបន្តិចទៀត",
  },
};

/** `t("km", "expiresIn", { clock: "1:59" })`; an unknown language reads English. */
export function t(language, key, vars = {}) {
  const table = STRINGS[language] ?? STRINGS.en;
  return (table[key] ?? STRINGS.en[key] ?? key).replace(/\{(\w+)\}/g, (_, name) => String(vars[name] ?? ""));
}

const primary = (tag) =>
  String(tag ?? "")
    .toLowerCase()
    .split(/[-_;]/)[0]
    .trim();

/**
 * The language to show: the one chosen on this browser before (the switch), else the first of the browser's
 * languages that is Khmer or English (`navigator.languages` = ["km-KH", "en"] → Khmer), else English.
 */
export function chooseLanguage(browserLanguages, stored) {
  if (LANGUAGES.includes(stored)) return stored;
  for (const tag of browserLanguages ?? []) {
    const p = primary(tag);
    if (LANGUAGES.includes(p)) return p;
  }
  return "en";
}

/** The language kept by the switch, if any (storage may be refused, e.g. in a sandboxed frame). */
export function storedLanguage() {
  try {
    return window.localStorage.getItem(STORE_KEY);
  } catch {
    return null;
  }
}

export function storeLanguage(language) {
  try {
    window.localStorage.setItem(STORE_KEY, language);
  } catch {
    /* not kept: the switch still works for this visit */
  }
}

/** The language of this browser, as the page first shows it. */
export function initialLanguage() {
  return chooseLanguage(navigator.languages?.length ? navigator.languages : [navigator.language], storedLanguage());
}

export const TIME_ZONE = "Asia/Phnom_Penh";

const MONTHS = {
  en: ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"],
  km: ["មករា", "កុម្ភៈ", "មីនា", "មេសា", "ឧសភា", "មិថុនា", "កក្កដា", "សីហា", "កញ្ញា", "តុលា", "វិច្ឆិកា", "ធ្នូ"],
};

/**
 * "25 Nov 2026, 22:54" / "25 វិច្ឆិកា 2026 ម៉ោង 22:54": the date and time in Phnom Penh, Latin digits, 24-hour
 * clock. The month names are ours: browsers' own Khmer locale data is often missing (Chromium falls back to
 * English), the time zone arithmetic is theirs.
 */
export function formatDateTime(iso, language) {
  const date = new Date(iso);
  if (iso === null || iso === undefined || Number.isNaN(date.getTime())) return "";
  const parts = {};
  const format = new Intl.DateTimeFormat("en-US", {
    timeZone: TIME_ZONE,
    numberingSystem: "latn",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  });
  for (const { type, value } of format.formatToParts(date)) parts[type] = value;
  const month = (MONTHS[language] ?? MONTHS.en)[Number(parts.month) - 1];
  const clock = `${parts.hour}:${parts.minute}`;
  return language === "km"
    ? `${parts.day} ${month} ${parts.year} ម៉ោង ${clock}`
    : `${parts.day} ${month} ${parts.year}, ${clock}`;
}
