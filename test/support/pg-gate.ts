import { connect, createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

const PG_HOST = "127.0.0.1";
const PG_PORT = 5432;

/**
 * A TCP gate between the service and the machine's PostgreSQL. It forwards every connection as is, and can
 * hold back PostgreSQL's answer to one statement (found by its text) until the test releases it: the
 * statement has run, the service has not read its answer yet. That is what a busy machine does to a process
 * now and then by chance; the gate does it on purpose, so a race between two statements can be tested.
 */
export interface PgGate {
  /** `dbUrl` (a database on the machine's PostgreSQL) reached through the gate. */
  url(dbUrl: string): string;
  /**
   * The answer to the next statement whose text contains `sql` is held. Resolves once PostgreSQL has answered
   * it (so the statement ran and its snapshot is taken); `release()` passes the answer on.
   */
  holdAnswer(sql: string): Promise<{ release(): void }>;
  close(): Promise<void>;
}

interface Armed {
  pattern: Buffer;
  resolve(held: { release(): void }): void;
}

export async function startPgGate(): Promise<PgGate> {
  const sockets = new Set<Socket>();
  let armed: Armed | null = null;
  const server = createServer((client) => {
    const upstream = connect(PG_PORT, PG_HOST);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => (s === client ? upstream : client).destroy());
    }
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    // The last bytes sent, so a statement text split between two packets is still found.
    let tail = Buffer.alloc(0);
    let holding: { chunks: Buffer[]; resolve: Armed["resolve"] | null } | null = null;
    client.on("data", (chunk: Buffer) => {
      const seen = Buffer.concat([tail, chunk]);
      if (armed !== null && holding === null && seen.includes(armed.pattern)) {
        holding = { chunks: [], resolve: armed.resolve };
        armed = null;
      }
      tail = seen.subarray(Math.max(0, seen.length - 200));
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (holding === null) return void client.write(chunk);
      holding.chunks.push(chunk);
      const h = holding;
      if (h.resolve === null) return;
      const resolve = h.resolve;
      h.resolve = null;
      resolve({
        release: () => {
          holding = null;
          for (const c of h.chunks) client.write(c);
        },
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: (dbUrl) => {
      const u = new URL(dbUrl);
      u.host = `127.0.0.1:${port}`;
      return u.toString();
    },
    holdAnswer: (sql) => new Promise((resolve) => (armed = { pattern: Buffer.from(sql, "utf8"), resolve })),
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
