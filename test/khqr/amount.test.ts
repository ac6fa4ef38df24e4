import { describe, expect, it } from "@jest/globals";
import { formatKhqrAmount } from "../../src/khqr/index.js";

describe("formatKhqrAmount", () => {
  it.each([
    ["1.50", "1.50"],
    ["1.5", "1.50"],
    ["1.0", "1.00"],
    ["10", "10"],
    ["0.01", "0.01"],
    ["0.5", "0.50"],
    ["007.25", "7.25"],
    ["1234567890.12", "1234567890.12"],
  ])("USD %s → %s (2 decimals when there is a fraction, as the SDK writes)", (input, out) => {
    expect(formatKhqrAmount(input, 840)).toBe(out);
  });

  it.each([
    ["1.555"],
    ["0"],
    ["0.00"],
    [""],
    ["."],
    [".5"],
    ["1."],
    ["-1"],
    ["+1"],
    ["1e3"],
    [" 1"],
    ["1,000"],
    ["1.2.3"],
    ["12345678901.50"], // 14 characters: over tag 54's 13
  ])("USD %j is rejected", (input) => {
    expect(formatKhqrAmount(input, 840)).toBeNull();
  });

  it.each([
    ["25000", "25000"],
    ["100.00", "100"],
    ["100.0", "100"],
    ["0100", "100"],
    ["9999999999999", "9999999999999"],
  ])("KHR %s → %s (riel without decimals)", (input, out) => {
    expect(formatKhqrAmount(input, 116)).toBe(out);
  });

  it.each([["100.5"], ["100.05"], ["100.000"], ["0"], ["0.00"], ["10000000000000"], ["abc"]])(
    "KHR %j is rejected",
    (input) => {
      expect(formatKhqrAmount(input, 116)).toBeNull();
    },
  );

  it("rejects other currencies and non-strings without throwing", () => {
    expect(formatKhqrAmount("1.00", 764 as never)).toBeNull();
    expect(formatKhqrAmount(1.5 as unknown as string, 840)).toBeNull();
  });
});
