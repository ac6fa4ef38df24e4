import { describe, it, expect } from "@jest/globals";
import { ATTEMPT_KEEP_BYTES, headerLines, keepBody } from "../../src/webhooks/attempt-record.js";

async function* chunks(...parts: string[]): AsyncGenerator<Buffer> {
  for (const p of parts) yield Buffer.from(p);
}

describe("what an attempt keeps of an answer", () => {
  it("cuts at 4 KB without leaving half a Khmer character, and says it cut", async () => {
    // 4,095 bytes, then a 3-byte Khmer letter across the limit.
    const kept = await keepBody(chunks("a".repeat(4000), "b".repeat(95), "ខ", "rest"), []);
    expect(kept.truncated).toBe(true);
    expect(kept.text).toBe("a".repeat(4000) + "b".repeat(95));
    const whole = await keepBody(chunks("ស្វាគមន៍", ' {"ok":true}'), []);
    expect(whole).toEqual({ text: 'ស្វាគមន៍ {"ok":true}', truncated: false });
  });

  it("hides secrets an endpoint echoes, credential headers, and NULs PostgreSQL cannot store", async () => {
    const secret = "whsec_0123456789abcdef";
    const kept = await keepBody(chunks(`echo ${secret}\u0000end`), [secret]);
    expect(kept.text).toBe("echo [redacted]\uFFFDend");
    const lines = headerLines({ "Set-Cookie": ["a=1", "b=2"], "X-Echo": secret, Server: "nginx" }, [secret]);
    expect(lines).toEqual([
      { name: "set-cookie", value: "[redacted]" },
      { name: "set-cookie", value: "[redacted]" },
      { name: "x-echo", value: "[redacted]" },
      { name: "server", value: "nginx" },
    ]);
  });

  it("keeps at most 4 KB of headers", () => {
    const many = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`x-h${i}`, "v".repeat(40)]));
    const lines = headerLines(many, []);
    const bytes = lines.slice(0, -1).reduce((n, l) => n + l.name.length + l.value.length, 0);
    expect(bytes).toBeLessThanOrEqual(ATTEMPT_KEEP_BYTES);
    expect(lines.at(-1)).toEqual({ name: "…", value: "further headers not kept (4 KB)" });
  });
});
