import { describe, expect, it } from "@jest/globals";
import { isTemplateId, isWellFormed, readTlv, writeTlv } from "../../src/khqr/tlv.js";

describe("TLV reader", () => {
  it("reads id and length packed as id * 100 + length", () => {
    expect(readTlv("000201", 0, 6)).toBe(2);
    expect(readTlv("5905devit", 0, 9)).toBe(5905);
    expect(readTlv("xx6304ABCD", 2, 10)).toBe(6304);
  });

  it("rejects headers that are not four digits", () => {
    expect(readTlv("0a0201", 0, 6)).toBe(-1);
    expect(readTlv("00 201", 0, 6)).toBe(-1);
    expect(readTlv("0002", 0, 3)).toBe(-1);
    expect(readTlv("", 0, 0)).toBe(-1);
  });

  it("rejects a value that runs past the end of its container", () => {
    expect(readTlv("5905devi", 0, 8)).toBe(-1);
    expect(readTlv("5905devit", 0, 8)).toBe(-1); // the container ends before the string does
    expect(readTlv("5900", 0, 4)).toBe(5900);
  });

  it("counts the length in UTF-16 code units, as the reference SDK does", () => {
    const km = "ហាង";
    expect(readTlv(`0103${km}`, 0, 7)).toBe(103);
  });

  it("checks a template is a sequence of complete data objects", () => {
    expect(isWellFormed("0010devit@abaa0102xy", 0, 20)).toBe(true);
    expect(isWellFormed("", 0, 0)).toBe(true);
    expect(isWellFormed("0010devit@abaa01", 0, 16)).toBe(false);
    expect(isWellFormed("0010devit@abaa0103xy", 0, 20)).toBe(false);
  });

  it("knows which ids are templates: 26–51, 62, 64, 80–99", () => {
    const templates = Array.from({ length: 100 }, (_, i) => i).filter(isTemplateId);
    const expected = [
      ...Array.from({ length: 26 }, (_, i) => 26 + i),
      62,
      64,
      ...Array.from({ length: 20 }, (_, i) => 80 + i),
    ];
    expect(templates).toEqual(expected);
  });
});

describe("TLV writer", () => {
  it("writes id, two-digit length and value", () => {
    expect(writeTlv("59", "devit")).toBe("5905devit");
    expect(writeTlv("62", "")).toBe("6200");
    expect(writeTlv("60", "x".repeat(15))).toBe("6015" + "x".repeat(15));
  });

  it("refuses values that do not fit two digits", () => {
    expect(() => writeTlv("62", "x".repeat(100))).toThrow(RangeError);
    expect(writeTlv("62", "x".repeat(99))).toHaveLength(103);
  });

  it("round-trips through the reader", () => {
    const s = writeTlv("29", writeTlv("00", "a@b") + writeTlv("01", "123"));
    const h = readTlv(s, 0, s.length);
    expect(Math.floor(h / 100)).toBe(29);
    expect(isWellFormed(s, 4, 4 + (h % 100))).toBe(true);
  });
});
