// The service's commands (serve, api, worker, admin, schema), loaded by main.ts once the compile cache is on.
import "reflect-metadata";
import { writeFileSync } from "node:fs";
import { flushCompileCache } from "node:module";
import { ConfigError, loadConfig } from "./config.js";
import { areaViewsOf, createApp, keyKindsOf, MODULES, schemaSdl, type Role } from "./app.js";
import { createLogger } from "./logger.js";
import { prettyDestination } from "./logs/pretty.js";
import { runAdminCli } from "./admin/cli.js";
import { listenCommand } from "./webhooks/listen.js";
import { StartupError } from "./errors.js";

const USAGE = `usage: node dist/src/main.js <serve|api|worker|admin|schema> [...]
  serve   API + worker in one process (default)
  api     HTTP only: REST, GraphQL, subscriptions, dashboard
  worker  monitoring and webhook jobs (health and metrics on PORT)
  admin   operator commands against a running service (see: admin help)
  schema  write schema.graphql from the code`;

export async function main(argv: string[]): Promise<void> {
  const [command = "serve", ...rest] = argv;
  if (command === "help" || command === "--help") {
    console.log(USAGE);
    return;
  }
  if (command === "schema") {
    writeFileSync(rest[0] ?? "schema.graphql", await schemaSdl());
    return;
  }
  if (command === "admin") {
    const kinds = keyKindsOf(MODULES).list;
    process.exitCode = await runAdminCli(rest, process.env, {
      extra: { listen: listenCommand({ kinds, fields: areaViewsOf(MODULES).snapshotFields() }) },
      kinds,
    });
    return;
  }
  if (!["serve", "api", "worker"].includes(command)) {
    console.error(USAGE);
    process.exitCode = 2;
    return;
  }
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`Configuration error: ${err.message}`);
      process.exitCode = 2;
      return;
    }
    throw err;
  }
  const readable = config.log.format === "pretty" ? prettyDestination(process.stdout.isTTY === true) : undefined;
  const logger = createLogger(config, readable);
  const started = Date.now();
  const seeding = config.demo && command === "serve";
  // Ready only once the demo tenant exists: a script that waits for /readyz may use the printed keys at once.
  // Demo mode's simulators and tenant (src/demo/) are loaded only in demo mode: a production process never imports them.
  const demo = config.simulators || seeding ? await import("./demo/index.js") : null;
  const modules = demo !== null && config.simulators ? demo.DEMO_MODULES : MODULES;
  const app = await createApp(config, { role: command as Role, logger, deferStartup: seeding, modules });
  if (seeding && demo !== null) await demo.seedDemo(app, (banner) => process.stdout.write(banner));
  app.startupDone();
  // Written now rather than at exit, so a start after a crash (kill -9 writes nothing) finds it too.
  flushCompileCache();
  logger.info({ url: app.url, role: command, embedded: app.embedded, ms: Date.now() - started }, "service started");

  let signalled = false;
  const shutdown = async (signal: string) => {
    if (signalled) return;
    signalled = true;
    logger.info({ signal }, "shutting down");
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    try {
      await app.stop();
    } finally {
      // Exit explicitly: whatever a dependency may leave behind after stop() (Agenda 6's run watchdog, a timer of
      // half a job's lock lifetime that it never clears) must not delay the exit.
      process.exit(0);
    }
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
}

/** Runs the command in argv; a failure is one line (or a stack, if unknown) and a non-zero exit. */
export function run(argv: string[]): void {
  main(argv).catch((err: unknown) => {
    // A module's own setting (module.ts `settings`) is refused as loadConfig's are: one line, exit code 2.
    if (err instanceof ConfigError) {
      console.error(`Configuration error: ${err.message}`);
      process.exit(2);
    }
    // A known start-up failure is one line that says what to change; anything else keeps its stack.
    if (err instanceof StartupError) console.error(`Start-up failed: ${err.message}`);
    else console.error(err);
    process.exit(1);
  });
}
