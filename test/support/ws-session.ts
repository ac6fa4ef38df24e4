// A raw graphql-transport-ws session for the fuzz suite: frames are written as generated (valid or not)
// and everything the server sends back is recorded, with the close code.
import WebSocket from "ws";

export interface WsOutcome {
  messages: unknown[];
  closeCode: number | null;
  closeReason: string;
  error: string | null;
}

export function runSession(
  url: string,
  frames: (string | Buffer)[],
  settleMs = 150,
  timeoutMs = 10_000,
): Promise<WsOutcome> {
  return new Promise((resolve) => {
    const out: WsOutcome = { messages: [], closeCode: null, closeReason: "", error: null };
    const ws = new WebSocket(`${url.replace(/^http/, "ws")}/graphql`, "graphql-transport-ws");
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.terminate();
      resolve(out);
    };
    const timer = setTimeout(finish, timeoutMs);
    ws.on("message", (data: Buffer) => {
      try {
        out.messages.push(JSON.parse(data.toString("utf8")));
      } catch {
        out.messages.push({ unparsable: data.toString("utf8").slice(0, 200) });
      }
    });
    ws.on("close", (code, reason) => {
      out.closeCode = code;
      out.closeReason = reason.toString();
      finish();
    });
    ws.on("error", (err) => {
      out.error = err.message;
    });
    ws.on("open", async () => {
      for (const f of frames) {
        if (ws.readyState !== WebSocket.OPEN) break;
        ws.send(f);
        await new Promise((r) => setTimeout(r, 5));
      }
      await new Promise((r) => setTimeout(r, settleMs));
      if (ws.readyState === WebSocket.OPEN) ws.close(1000);
      setTimeout(finish, 500);
    });
  });
}
