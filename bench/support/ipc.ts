import { fork, type ChildProcess } from "node:child_process";
import { nodeArgsFromEnv } from "./service.js";
import { wallNow } from "./timing.js";

/** Messages between the bench and its forked helpers: a request carries `rid`, its answer the same `rid`. */
export interface Request {
  rid: number;
  op: string;
  [k: string]: unknown;
}
export interface Reply {
  rid: number;
  ok: boolean;
  error?: string;
  result?: unknown;
}

/** The parent's handle on a forked helper process. */
export class Helper {
  private next = 1;
  private readonly waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  private readonly exited: Promise<number | null>;

  private constructor(
    readonly child: ChildProcess,
    readonly name: string,
  ) {
    child.on("message", (m: Reply) => {
      const w = this.waiting.get(m.rid);
      if (!w) return;
      this.waiting.delete(m.rid);
      if (m.ok) w.resolve(m.result);
      else w.reject(new Error(`${name}: ${m.error}`));
    });
    this.exited = new Promise((resolve) =>
      child.once("exit", (code) => {
        for (const w of this.waiting.values()) w.reject(new Error(`${name} exited (code ${code})`));
        this.waiting.clear();
        resolve(code);
      }),
    );
  }

  /** Forks a compiled helper module (an absolute path under dist/bench). */
  static start(modulePath: string, name: string): Helper {
    const child = fork(modulePath, [], {
      // BENCH_HELPER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the helpers (load generator, receiver).
      execArgv: nodeArgsFromEnv("BENCH_HELPER_NODE_ARGS"),
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      env: { ...process.env, NODE_OPTIONS: "" },
    });
    return new Helper(child, name);
  }

  call<T>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    const rid = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(rid, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ rid, op, ...args } satisfies Request);
    });
  }

  /**
   * How far the helper's wall clock is from ours: offset = theirs − midpoint of our send and receive,
   * best of a few round trips; `within` is half the shortest round trip.
   */
  async clockOffset(): Promise<{ offsetMs: number; withinMs: number }> {
    let best = { offsetMs: 0, withinMs: Infinity };
    for (let i = 0; i < 5; i++) {
      const t0 = wallNow();
      const theirs = await this.call<number>("clock");
      const t1 = wallNow();
      if ((t1 - t0) / 2 < best.withinMs) best = { offsetMs: theirs - (t0 + t1) / 2, withinMs: (t1 - t0) / 2 };
    }
    return best;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      await this.call("exit").catch(() => undefined);
      const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
      await this.exited;
      clearTimeout(timer);
    }
  }
}

/** The helper side: answers requests with `handlers[op]`; `clock` and `exit` are built in. */
export function serveRequests(
  handlers: Record<string, (req: Request) => Promise<unknown> | unknown>,
  onExit: () => Promise<void> = async () => undefined,
): void {
  process.on("message", (req: Request) => {
    void (async () => {
      if (req.op === "clock") return send({ rid: req.rid, ok: true, result: wallNow() });
      if (req.op === "exit") {
        await onExit().catch(() => undefined);
        send({ rid: req.rid, ok: true });
        process.disconnect?.();
        setTimeout(() => process.exit(0), 50).unref();
        return;
      }
      const handler = handlers[req.op];
      try {
        if (!handler) throw new Error(`unknown op ${req.op}`);
        send({ rid: req.rid, ok: true, result: await handler(req) });
      } catch (err) {
        send({ rid: req.rid, ok: false, error: (err as Error).stack ?? String(err) });
      }
    })();
  });
}

function send(reply: Reply): void {
  process.send?.(reply);
}
