import { describe, expect, it } from "vitest";
import { isCanonicalAbsoluteDir, parseCpusToMillis, parseSizeToBytes } from "./sandbox-values";

describe("sandbox values", () => {
  it.each([
    ["512m", 512 * 1024 * 1024],
    ["1g", 1024 ** 3],
    ["64k", 65536],
  ])("parses size %s", (text, bytes) => {
    expect(parseSizeToBytes(text)).toBe(bytes);
  });
  it.each(["512", "512M", "0m", "05m", "1.5g", "-1m", "1t", " 1m"])("refuses size %j", (text) => {
    expect(parseSizeToBytes(text)).toBeUndefined();
  });
  it.each([
    ["1", 1000],
    ["0.5", 500],
    ["2.25", 2250],
    ["0.001", 1],
  ])("parses cpus %s", (text, millis) => {
    expect(parseCpusToMillis(text)).toBe(millis);
  });
  it.each(["", "1.", ".5", "1.0001", "01", "1e3", "-1"])("refuses cpus %j", (text) => {
    expect(parseCpusToMillis(text)).toBeUndefined();
  });
  it("checks canonical absolute directories", () => {
    expect(["/", "/usr/bin", "/opt/tool-1"].every(isCanonicalAbsoluteDir)).toBe(true);
    expect(["", "usr", "/usr/", "//usr", "/usr/./bin", "/usr/../bin", "/a\nb"].some(isCanonicalAbsoluteDir)).toBe(false);
  });
});
