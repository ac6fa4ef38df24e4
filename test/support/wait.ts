// How a test waits: it polls for what it asserts, with a generous deadline (a loaded 2-core machine is slow,
// never wrong). A fixed sleep is for when the passing of time is itself the input (a page held, a load
// phase), never to let something happen or not happen before an assertion.

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Polls `check` every `stepMs` until it returns a value other than undefined, null, false (or another falsy
 * value), and returns that value; fails after `timeoutMs`, naming `what`.
 */
export async function waitFor<T>(
  check: () => Promise<T | null | undefined | false> | T | null | undefined | false,
  timeoutMs = 10_000,
  stepMs = 100,
  what = "condition",
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(stepMs);
  }
}

/** `p`'s value, or `fallback` once `ms` have passed without it (a deadline; its timer is cleared either way). */
export async function within<T, F>(p: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<F>((r) => (timer = setTimeout(() => r(fallback), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
