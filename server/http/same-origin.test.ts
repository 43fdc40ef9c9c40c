import { describe, expect, it } from "vitest";
import { checkSameOrigin } from "./same-origin";

const PUBLIC = "http://localhost:8700";
function post(headers: Record<string, string>) {
  return { method: "POST", url: "http://localhost:8700/api/trpc/x", headers: new Headers({ host: "localhost:8700", ...headers }) };
}

describe("checkSameOrigin (CSRF defence for tRPC mutations)", () => {
  it("lets GET through without an Origin (queries change nothing)", () => {
    expect(checkSameOrigin({ method: "GET", url: "http://localhost:8700/", headers: new Headers() }, PUBLIC)).toEqual({ ok: true });
  });
  it("accepts a POST from the page's own origin and from the public URL's", () => {
    expect(checkSameOrigin(post({ origin: "http://localhost:8700", "sec-fetch-site": "same-origin" }), PUBLIC)).toEqual({ ok: true });
    expect(checkSameOrigin({ ...post({ origin: "http://localhost:8700" }), headers: new Headers({ host: "127.0.0.1:8700", origin: "http://localhost:8700" }) }, PUBLIC)).toEqual({ ok: true });
  });
  it.each([
    ["no Origin", {}],
    ["Origin null (sandboxed frame)", { origin: "null" }],
    ["another site's Origin", { origin: "https://evil.example" }],
    ["another port on the same host", { origin: "http://localhost:8701" }],
    ["a cross-site fetch claiming our Origin", { origin: "http://localhost:8700", "sec-fetch-site": "cross-site" }],
  ])("refuses a POST with %s", (_name, headers) => {
    expect(checkSameOrigin(post(headers), PUBLIC).ok).toBe(false);
  });
});
