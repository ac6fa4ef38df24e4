import { describe, it, expect, beforeAll, afterAll } from "@jest/globals";
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readmeBlocks, runShell } from "../support/readme.js";
import { isTrustedProxy } from "../../src/auth/client-address.js";
import { loadConfig } from "../../src/config.js";

/** What `docker compose` needs to read the file: it, and the files it mounts or builds from. */
const COMPOSE_FILES = ["docker-compose.yml", "Dockerfile", "deploy"];
const SETTINGS = {
  PUBLIC_BASE_URL: "https://pay.example.com",
  ADMIN_TOKEN: "t3L3QrdOh4-gKyrmM36WoFRbB8iNxJ7XgIWrRxLLnrI",
  SECRET_KEY: "4bsL2glC4EA9y_f2ZE2M6zDReNiDkMmimpt6AARRsJw",
  NETWORK_API_URL: "https://network.invalid",
  GATEWAY_API_URL: "https://gateway.invalid",
};

function compose(dir: string, args: string[], env: Record<string, string>): Promise<{ code: number; out: string }> {
  return new Promise((resolve) =>
    execFile(
      "docker-compose",
      args,
      { cwd: dir, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env } },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, out: `${stdout}${stderr}` }),
    ),
  );
}

/** The resolved file's services, each as its block of YAML text (docker-compose 1.x prints no JSON). */
function services(yaml: string): Record<string, string> {
  const out: Record<string, string> = {};
  const body = yaml.slice(yaml.indexOf("services:\n") + "services:\n".length);
  let name: string | null = null;
  for (const line of body.split("\n")) {
    if (/^\S/.test(line)) break;
    const head = /^ {2}([\w-]+):$/.exec(line);
    if (head) name = head[1] as string;
    else if (name !== null) out[name] = `${out[name] ?? ""}${line}\n`;
  }
  return out;
}

describe("docker-compose.yml deploys: a proxy in front of api replicas, workers, PostgreSQL", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "pqr-compose-"));
    for (const f of COMPOSE_FILES) cpSync(f, join(dir, f), { recursive: true });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("docs/deploying.md's settings step, run as written, validates the file (docker-compose config -q)", async () => {
    const block = readmeBlocks().get("deploy-config");
    expect(block).toBeDefined();
    // In a copy of its own: the block writes .env where it runs.
    const own = mkdtempSync(join(tmpdir(), "pqr-compose-readme-"));
    try {
      for (const f of COMPOSE_FILES) cpSync(f, join(own, f), { recursive: true });
      const r = await runShell(`cd ${JSON.stringify(own)}\n${block!.code}`, {}, 30_000);
      expect(r).toMatchObject({ code: 0, stderr: "" });
      expect(r.stdout).toContain("compose file and settings: OK");
      expect(readFileSync(join(own, ".env"), "utf8")).toMatch(/^ADMIN_TOKEN=\S{40,}$/m);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it("refuses to render without PUBLIC_BASE_URL, naming it (no checkoutUrl would say 127.0.0.1)", async () => {
    const { PUBLIC_BASE_URL: _omitted, ...rest } = SETTINGS;
    const r = await compose(dir, ["config", "-q"], rest);
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/set PUBLIC_BASE_URL/);
  });

  it("only the proxy publishes a port; api and workers are replicated, get PUBLIC_BASE_URL and have healthchecks", async () => {
    const r = await compose(dir, ["config"], SETTINGS);
    expect(r.code).toBe(0);
    const s = services(r.out);
    expect(Object.keys(s).sort()).toEqual(["api", "postgres", "proxy", "worker"]);
    for (const [name, block] of Object.entries(s)) {
      expect({ name, healthcheck: /\n {4}healthcheck:/.test(`\n${block}`) }).toEqual({ name, healthcheck: true });
      expect({ name, ports: /\n {4}ports:/.test(`\n${block}`) }).toEqual({ name, ports: name === "proxy" });
    }
    for (const name of ["api", "worker"]) {
      expect(s[name]).toMatch(/replicas: 2/);
      expect(s[name]).toContain(`PUBLIC_BASE_URL: ${SETTINGS.PUBLIC_BASE_URL}`);
      expect(s[name]).toMatch(/DATABASE_URL: postgresql:\/\/\S+@postgres:5432\//);
    }
    expect(s.proxy).toMatch(/image: nginx:/);
    expect(s.proxy).toMatch(/api:\n\s+condition: service_healthy/);
    expect(s.postgres).toMatch(/- pgdata:\/var\/lib\/postgresql\/data/);
    const scaled = await compose(dir, ["config"], { ...SETTINGS, API_REPLICAS: "4" });
    expect(services(scaled.out).api).toMatch(/replicas: 4/);
  });

  it("the proxy passes websocket upgrades and spreads requests over every api replica", () => {
    const conf = readFileSync("deploy/nginx.conf", "utf8");
    expect(conf).toMatch(/server api:4000 resolve;/);
    expect(conf).toMatch(/resolver 127\.0\.0\.11/);
    expect(conf).toMatch(/proxy_set_header Upgrade \$http_upgrade;/);
    expect(conf).toMatch(/proxy_set_header Connection \$connection_upgrade;/);
    expect(conf).toMatch(/proxy_http_version 1\.1;/);
    expect(conf).toMatch(/proxy_read_timeout 1h;/);
  });

  it("the api trusts the proxy's address, and only it; the proxy, the edge, replaces X-Forwarded-For with the address it saw", async () => {
    const r = await compose(dir, ["config"], SETTINGS);
    const s = services(r.out);
    const proxy = /\n +ipv4_address: (\S+)\n/.exec(`\n${s.proxy}`)?.[1];
    expect(proxy).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    for (const name of ["api", "worker"]) expect(s[name]).toContain(`TRUSTED_PROXIES: ${proxy}\n`);
    // The subnet the proxy's fixed address is on, and the api's setting accepted as the service reads it.
    const subnet = /\n +- subnet: (\S+)\n/.exec(r.out)?.[1] as string;
    expect(isTrustedProxy(proxy, loadConfig({ NODE_ENV: "test", TRUSTED_PROXIES: subnet }, 4096).trustedProxies)).toBe(
      true,
    );
    const conf = readFileSync("deploy/nginx.conf", "utf8");
    expect(conf).toMatch(/^\s*proxy_set_header X-Forwarded-For \$remote_addr;$/m);
    expect(conf).not.toMatch(/proxy_add_x_forwarded_for/);
    // The per-client connection cap the api no longer applies to the proxy's connections.
    expect(conf).toMatch(/^limit_conn_zone \$binary_remote_addr zone=per_client:\S+;$/m);
    expect(conf).toMatch(/^\s*limit_conn per_client \d+;$/m);
  });
});
