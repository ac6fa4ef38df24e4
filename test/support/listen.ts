import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

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
