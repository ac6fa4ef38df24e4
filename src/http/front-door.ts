import type express from "express";

// GET / on the public listener: a small page naming what this process serves there and linking it (the docs, the
// explorers, the dashboard, demo mode's webhook inbox). Only "/" itself: every other unknown path keeps the JSON
// 404 of the last handlers (listeners.ts). docs/decisions/0252-a-front-door-at-the-root.md.

/** What the front page may link, as this process serves it on the public listener. */
export interface FrontDoorOptions {
  /** /graphiql and /graphql's Sandbox page (introspection on: NODE_ENV not production). */
  explorers: boolean;
  /** The dashboard is on this listener (no ADMIN_PORT); else it is on the operator listener and is only named. */
  dashboardHere: boolean;
  /** Demo mode's simulators and their webhook inbox. */
  simulators: boolean;
}

interface Door {
  href: string | null;
  title: string;
  text: string;
}

/** The page's entries, in the order a newcomer needs them. */
export function frontDoors(o: FrontDoorOptions): Door[] {
  return [
    {
      href: "/docs",
      title: "REST API reference",
      text: "Every endpoint and webhook, runnable from the page (OpenAPI).",
    },
    ...(o.explorers
      ? [
          { href: "/graphiql", title: "GraphiQL", text: "The GraphQL explorer that works offline." },
          { href: "/graphql", title: "Apollo Sandbox", text: "The GraphQL endpoint; in a browser, Apollo's explorer." },
        ]
      : []),
    o.dashboardHere
      ? { href: "/dashboard/", title: "Dashboard", text: "Payments, merchants, keys and webhooks (admin token)." }
      : { href: null, title: "Dashboard", text: "On the operator listener (ADMIN_PORT), not on this one." },
    ...(o.simulators
      ? [{ href: "/sim/inbox", title: "Webhook inbox", text: "What the demo's webhook endpoint received (JSON)." }]
      : []),
  ];
}

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

function page(doors: Door[]): string {
  const items = doors
    .map((d) => {
      const name = d.href === null ? esc(d.title) : `<a href="${esc(d.href)}">${esc(d.title)}</a>`;
      return `<li>${name} <span>${esc(d.text)}</span></li>`;
    })
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Payment QR Service</title><link rel="icon" href="data:,">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1d2939}
li{margin:.5rem 0}li span{display:block;color:#475467}a{color:#0b5cad;font-weight:600}</style></head>
<body><main><h1>Payment QR Service</h1><p>KHQR payments: generic QRs, a hosted gateway and payment links.</p>
<ul>
${items}
</ul></main></body></html>
`;
}

// No script at all; the one inline stylesheet is ours.
const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; " +
  "frame-ancestors 'none'";

/** Mounts GET / (and HEAD) on the public listener's app. */
export function mountFrontDoor(app: express.Express, options: FrontDoorOptions): void {
  const html = page(frontDoors(options));
  app.get("/", (_req, res) => {
    res.setHeader("content-security-policy", CSP);
    res.setHeader("x-content-type-options", "nosniff");
    res.type("html").send(html);
  });
}
