import { describe, expect, it } from "vitest";
import { allowedOrigins, checkDeclaredLength, checkHeaderBytes, checkJsonDepth, checkOrigin, checkSessionIdShape, parseBearer } from "./checks";

describe("checkOrigin (DNS-rebinding defence)", () => {
  const allowed = allowedOrigins("http://127.0.0.1:8700", ["https://admin.example.org"]);
  it("allows a missing Origin (non-browser client) and exact allowed origins", () => {
    expect(checkOrigin(null, allowed)).toEqual({ ok: true });
    expect(checkOrigin("http://127.0.0.1:8700", allowed)).toEqual({ ok: true });
    expect(checkOrigin("https://admin.example.org", allowed)).toEqual({ ok: true });
  });
  it.each(["null", "", "evil", "http://127.0.0.1:8700/", "http://127.0.0.1:8700/x", "http://user@127.0.0.1:8700", "http://127.0.0.1:8701", "https://127.0.0.1:8700", "http://localhost:8700", "https://admin.example.org.evil.com"])(
    "refuses %j with 403",
    (origin) => {
      expect(checkOrigin(origin, allowed)).toMatchObject({ ok: false, status: 403, code: "FORBIDDEN" });
    },
  );
});

describe("parseBearer", () => {
  it("takes exactly `Bearer <token>`", () => {
    expect(parseBearer("Bearer lh_abc")).toEqual({ ok: true, value: "lh_abc" });
    expect(parseBearer("bearer lh_abc")).toEqual({ ok: true, value: "lh_abc" });
  });
  it.each([null, "", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Bearer a b", "Bearer\tlh_x", "lh_abc", "Bearer lh_abc\n"])("refuses %j with 401", (header) => {
    expect(parseBearer(header)).toMatchObject({ ok: false, status: 401, code: "UNAUTHENTICATED" });
  });
});

describe("size and shape limits", () => {
  it("counts header bytes", () => {
    expect(checkHeaderBytes([["a", "b"]], 100)).toEqual({ ok: true });
    expect(checkHeaderBytes([["x-big", "y".repeat(200)]], 100)).toMatchObject({ ok: false, status: 431 });
  });
  it("refuses deep JSON without parsing it, ignoring brackets in strings", () => {
    expect(checkJsonDepth("[".repeat(64) + "]".repeat(64), 64)).toEqual({ ok: true });
    expect(checkJsonDepth("[".repeat(65), 64)).toMatchObject({ ok: false, status: 400 });
    expect(checkJsonDepth(JSON.stringify({ s: "[[[[[[[[[[\\\"[[[[" }), 2)).toEqual({ ok: true });
    expect(checkJsonDepth('{"a":{"b":{"c":1}}}', 2)).toMatchObject({ ok: false });
  });
  it("checks a declared Content-Length", () => {
    expect(checkDeclaredLength(null, 10)).toEqual({ ok: true });
    expect(checkDeclaredLength("10", 10)).toEqual({ ok: true });
    expect(checkDeclaredLength("11", 10)).toMatchObject({ ok: false, status: 413 });
    expect(checkDeclaredLength("-1", 10)).toMatchObject({ ok: false, status: 400 });
    expect(checkDeclaredLength("1e3", 10)).toMatchObject({ ok: false, status: 400 });
  });
  it("knows the shape of its session ids", () => {
    expect(checkSessionIdShape("A".repeat(43))).toBe(true);
    expect(checkSessionIdShape("A".repeat(44))).toBe(false);
    expect(checkSessionIdShape("../../etc/passwd")).toBe(false);
  });
});
