import { describe, it, expect } from "@jest/globals";
import { createHmac } from "node:crypto";
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

  describe("hides an endpoint secret and a signature in every form an endpoint may echo them in", () => {
    // An endpoint secret as the service makes them (whsec_ + 24 random bytes in base64url), chosen so that its bytes
    // in standard base64 hold `+` and `/`; and a signature made with it (hex, as in x-signature's v1=).
    const raw = Buffer.from("fbffbf9c21d04e7a5b3368e2d1f0a7c4e9b6158d2f7a0c3e", "hex");
    const secret = `whsec_${raw.toString("base64url")}`;
    const signature = createHmac("sha256", secret).update("1700000000.{}").digest("hex");
    const hidden = [secret, signature];
    const digest = Buffer.from(signature, "hex");
    const forms: [string, string][] = [
      ["the secret without its prefix", secret.slice("whsec_".length)],
      ["the secret upper-cased", secret.toUpperCase()],
      ["the secret in base64", Buffer.from(secret).toString("base64")],
      ["the secret in base64url", Buffer.from(secret).toString("base64url")],
      ["the secret in hex", Buffer.from(secret).toString("hex")],
      ["the secret's bytes in hex", raw.toString("hex")],
      ["the secret's bytes in standard base64", raw.toString("base64")],
      ["the secret's bytes in base64, URL-encoded", encodeURIComponent(raw.toString("base64"))],
      ["the secret's bytes in base64, JSON-escaped as PHP does", raw.toString("base64").replace(/\//g, "\\/")],
      ["the secret inside a longer text, in base64", Buffer.from(`{"key":"${secret}"}`).toString("base64")],
      [
        "the secret inside a longer text, in base64 (another alignment)",
        Buffer.from(`{"k":"${secret}"}`).toString("base64"),
      ],
      [
        "the secret inside a longer text, in base64 (the third alignment)",
        Buffer.from(`{"ke":"${secret}"}`).toString("base64"),
      ],
      ["the signature upper-cased", signature.toUpperCase()],
      ["the signature as v1= upper-cased", `V1=${signature.toUpperCase()}`],
      ["the signature's digest in base64", digest.toString("base64")],
      ["the signature's digest in base64url", digest.toString("base64url")],
    ];

    it.each(forms)("%s, in the body and in a header", async (_form, echoed) => {
      const kept = await keepBody(chunks(`{"echo":"${echoed}"}`), hidden);
      const lines = headerLines({ "x-echo": `got ${echoed}` }, hidden);
      for (const text of [kept.text, lines[0]?.value ?? ""]) {
        expect(text).toContain("[redacted]");
        expect(text.toLowerCase()).not.toContain(echoed.toLowerCase());
        // Nothing of the secret's random part, nor 16 hex digits of the signature, is left in any case.
        for (const leak of [raw.toString("hex"), raw.toString("base64"), raw.toString("base64url"), signature])
          for (let i = 0; i + 16 <= leak.length; i += 4)
            expect(text.toLowerCase()).not.toContain(leak.slice(i, i + 16).toLowerCase());
      }
    });

    it("the first characters of a secret cut by the 4 KB limit", async () => {
      const kept = await keepBody(chunks(`${"a".repeat(ATTEMPT_KEEP_BYTES - 10)} ${secret} and more`), hidden);
      expect(kept.truncated).toBe(true);
      expect(kept.text).toBe(`${"a".repeat(ATTEMPT_KEEP_BYTES - 10)} [redacted]`);
    });

    it("and leaves ordinary text alone", async () => {
      const text = '{"ok":true,"received":"payment.completed","id":"evt_0123456789"}';
      expect((await keepBody(chunks(text), hidden)).text).toBe(text);
    });
  });
});
