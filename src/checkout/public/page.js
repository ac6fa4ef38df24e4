// The hosted checkout page: /pay/<transactionId>#token=<clientToken> (the checkoutUrl of a generate answer).
import "./checkout.js";

const id = decodeURIComponent(location.pathname.split("/").pop() ?? "");
const token = new URLSearchParams(location.hash.slice(1)).get("token");
const main = document.getElementById("checkout");
if (!id || !token) {
  main.querySelector(".pqc-status").textContent = "This payment link is not complete";
} else {
  const element = document.createElement("payment-qr-checkout");
  element.setAttribute("url", location.origin);
  element.setAttribute("transaction-id", id);
  element.setAttribute("client-token", token);
  main.replaceChildren(element);
}
