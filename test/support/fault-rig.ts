import { Cluster } from "./cluster.js";
import { createFaultsDatabase } from "./db.js";
import { startUpstreams, type Upstreams } from "./upstreams.js";
import { startReceiver, type WebhookReceiver } from "./webhook-receiver.js";

/** What every multi-process fault suite stands on: a database of its own, the simulators, a receiver, a cluster. */
export interface FaultRig {
  db: { url: string; drop(): Promise<void> };
  ups: Upstreams;
  receiver: WebhookReceiver;
  /** Empty: each suite adds the processes it needs. */
  cluster: Cluster;
  /** Stops the processes, the receiver and the simulators, then drops the database; safe to call twice. */
  dispose(): Promise<void>;
}

/**
 * Starts the rig; a part that fails to start disposes the ones already up before the error is thrown.
 * `adminUrl` puts the database on another server (a private PostgreSQL the suite restarts).
 */
export async function startFaultRig(name: string, opts: { adminUrl?: string } = {}): Promise<FaultRig> {
  const parts: Partial<Omit<FaultRig, "dispose">> = {};
  let disposed: Promise<void> | null = null;
  const dispose = () =>
    (disposed ??= (async () => {
      await parts.cluster?.dispose();
      await parts.receiver?.down();
      await parts.ups?.close();
      // A suite may leave its database server stopped (postgres-restart): the server goes with it then.
      await parts.db?.drop().catch(() => undefined);
    })());
  try {
    parts.db = await createFaultsDatabase(opts.adminUrl);
    parts.ups = await startUpstreams();
    parts.receiver = await startReceiver();
    parts.cluster = new Cluster({ name, databaseUrl: parts.db.url, env: parts.ups.env });
    return { ...(parts as Omit<FaultRig, "dispose">), dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}
