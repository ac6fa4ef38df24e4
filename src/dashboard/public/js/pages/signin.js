// Sign-in with the admin token. The token is checked against the API before it is kept (sessionStorage only).
import { ApiError, gql, session } from "../api.js";
import { fill, h } from "../dom.js";
import { field } from "../form.js";

class SignIn extends HTMLElement {
  connectedCallback() {
    const error = h("p", { class: "form-error", role: "alert" });
    // method=post: even if the script failed, the browser would never put the token in the URL.
    const form = h(
      "form",
      { method: "post", action: "#", class: "editor signin-form", "aria-labelledby": "signin-h" },
      field({
        name: "token",
        label: "Admin token",
        type: "password",
        required: true,
        autocomplete: "current-password",
        help: "ADMIN_TOKEN of this service (demo mode prints it and writes it to data/demo.json). Kept in this tab's session storage only.",
      }),
      error,
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Sign in")),
    );
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const input = form.querySelector("input[name=token]");
      const token = input.value.trim();
      error.textContent = "";
      if (token === "") {
        error.textContent = "Enter the admin token.";
        input.setAttribute("aria-invalid", "true");
        return input.focus();
      }
      const btn = form.querySelector("button");
      btn.disabled = true;
      try {
        await gql("{ merchants { id } }", {}, token);
        session.signIn(token);
      } catch (err) {
        error.textContent =
          err instanceof ApiError && err.code === "UNAUTHENTICATED"
            ? "That admin token was refused."
            : `Could not sign in: ${err.message}`;
        input.setAttribute("aria-invalid", "true");
        input.select();
        input.focus();
      } finally {
        btn.disabled = false;
      }
    });
    fill(
      this,
      h(
        "main",
        { class: "signin", id: "main" },
        h("h1", { id: "signin-h" }, "Payment QR Service"),
        h("p", { class: "lead" }, "Sign in to manage merchants, keys and webhooks, and to watch payments live."),
        form,
      ),
    );
    form.querySelector("input").focus();
  }
}

customElements.define("pqr-signin", SignIn);
