import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * How long a server a test starts in its own process keeps an idle connection. The test's fetch shares the server's
 * event loop: a test that holds the loop past Node's 5 s default (a QR decoded on a busy machine) would send its next
 * request on a kept-alive connection the server then closes as idle, before reading it (ECONNRESET, "other side
 * closed"). A client is told the timeout and lets its idle connections go first.
 */
export const TEST_KEEP_ALIVE_MS = 60_000;

/** Listens on 127.0.0.1:port (0 = any), rejecting if the port is taken; resolves with the port bound. */
export async function listenLoopback(server: Server, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** Closes the port at once: new callers get "connection refused", requests in flight are cut. */
export async function closeNow(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
}
