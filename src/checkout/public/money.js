// How an amount is shown to a person, the same on the checkout page and in the dashboard (the dashboard keeps an
// identical copy, src/dashboard/public/js/money.js; a test holds them equal). The value comes from the API already
// written by the one money rule — text with the currency's decimals, KHR "4000", USD "1.50" —, so this only groups
// the thousands: "4,000 KHR", "1,234.50 USD".

/** "4000", "KHR" → "4,000 KHR"; "1234.5", "USD" → "1,234.50 USD". */
export function formatMoney(amount, currency) {
  const [whole, frac = ""] = String(amount).split(".");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const digits = currency === "USD" ? frac.padEnd(2, "0") : frac.replace(/0+$/, "");
  return `${grouped}${digits ? `.${digits}` : ""} ${currency}`;
}
