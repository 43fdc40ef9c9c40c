import { describe, expect, it } from "vitest";
import { safeNext } from "./safe-next";

const ORIGIN = "http://localhost:8700";

/** Where a browser on ORIGIN ends up after `location.assign(path)` — the property that matters. */
function landsOn(path: string): string {
  // The browser strips tab/CR/LF before parsing; do the same so the check cannot be fooled by them.
  return new URL(path.replace(/[\t\n\r]/g, ""), ORIGIN).origin;
}

describe("safeNext (where sign-in may send the browser)", () => {
  const hostile: Array<[string, string]> = [
    ["tab", "/\t/evil.example:8443/x"],
    ["newline", "/\n/evil.example/x"],
    ["carriage return", "/\r/evil.example/x"],
    ["`/%09/host` after the query is decoded", decodeURIComponent("/%09/evil.example:8443/x")],
    ["NUL", "/\u0000/evil.example"],
    ["DEL", "/\u007f/evil.example"],
    ["C1 control", "/\u0085/evil.example"],
    ["backslash after slash", "/\\evil.example"],
    ["backslashes only", "\\\\evil.example"],
    ["protocol-relative", "//evil.example/x"],
    ["protocol-relative with a port", "//evil.example:8700/"],
    ["triple slash", "///evil.example"],
    ["absolute URL of another origin", "https://evil.example/"],
    ["same host, another scheme", "https://localhost:8700/"],
    ["same host, another port", "http://localhost:8701/"],
    ["credentials in front of another host", "http://localhost:8700@evil.example/"],
    ["javascript:", "javascript:alert(1)"],
    ["JavaScript: in capitals, leading space", " JavaScript:alert(1)"],
    ["data:", "data:text/html,<script>alert(1)</script>"],
    ["dot segment that leaves //host", "/.//evil.example"],
    ["dot-dot segment that leaves //host", "/x/..//evil.example"],
    ["line separator U+2028", "/\u2028/evil.example"],
    ["paragraph separator U+2029", "/\u2029/evil.example"],
    ["no-break space", "/\u00a0/evil.example"],
    ["right-to-left override", "/\u202e/moc.elpmaxe-live"],
    ["zero-width space", "/\u200b/evil.example"],
    ["leading space", " /ok"],
  ];

  it.each(hostile)("refuses %s → /", (_name, next) => {
    expect(safeNext(next, ORIGIN)).toBe("/");
  });

  it("never returns a path that takes the browser to another origin, for any input in the table", () => {
    for (const [, next] of hostile) expect(landsOn(safeNext(next, ORIGIN))).toBe(ORIGIN);
  });

  const good: Array<[string, string]> = [
    ["/", "/"],
    ["/approvals", "/approvals"],
    ["/hosts/abc?tab=health#jobs", "/hosts/abc?tab=health#jobs"],
    ["/oauth/authorize?client_id=x&redirect_uri=https%3A%2F%2Fclient.example%2Fcb&state=a%2Bb", "/oauth/authorize?client_id=x&redirect_uri=https%3A%2F%2Fclient.example%2Fcb&state=a%2Bb"],
    // Percent-encoded, a tab stays in the path of this origin: the browser does not decode it before parsing.
    ["/%09/evil.example", "/%09/evil.example"],
    ["/a/../b", "/b"],
    ["http://localhost:8700/audit?x=1", "/audit?x=1"],
    ["//localhost:8700/audit", "/audit"],
    ["audit", "/audit"],
  ];

  it.each(good)("keeps %s", (next, expected) => {
    expect(safeNext(next, ORIGIN)).toBe(expected);
  });

  it("falls back to / for a missing or empty next, and for a page origin it cannot parse", () => {
    expect(safeNext(undefined, ORIGIN)).toBe("/");
    expect(safeNext(null, ORIGIN)).toBe("/");
    expect(safeNext("", ORIGIN)).toBe("/");
    expect(safeNext("/approvals", "not a url")).toBe("/");
    expect(safeNext("/approvals", "null")).toBe("/");
  });

  it("compares against the page's origin, not a fixed one", () => {
    expect(safeNext("https://hub.example.org/approvals", "https://hub.example.org")).toBe("/approvals");
    expect(safeNext("https://hub.example.org/approvals", ORIGIN)).toBe("/");
  });
});
