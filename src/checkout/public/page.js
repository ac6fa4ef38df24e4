// The hosted checkout page: /pay/<transactionId>#token=<clientToken> (the checkoutUrl of a generate answer).
import "./checkout.js";
import { initialLanguage, t } from "./i18n.js";

const id = decodeURIComponent(location.pathname.split("/").pop() ?? "");
const token = new URLSearchParams(location.hash.slice(1)).get("token");
const main = document.getElementById("checkout");

/** The document follows the checkout: its language (screen readers, fonts) and a title naming the merchant. */
function follow({ language, merchantName }) {
  document.documentElement.lang = language;
  document.title = merchantName
    ? t(language, "pageTitleMerchant", { merchant: merchantName })
    : t(language, "pageTitle");
}

if (!id || !token) {
  const language = initialLanguage();
  follow({ language, merchantName: "" });
  main.querySelector(".pqc-status").textContent = t(language, "linkIncomplete");
} else {
  const element = document.createElement("payment-qr-checkout");
  element.addEventListener("pqc-change", (e) => follow(e.detail));
  element.setAttribute("url", location.origin);
  element.setAttribute("transaction-id", id);
  element.setAttribute("client-token", token);
  main.replaceChildren(element);
}
