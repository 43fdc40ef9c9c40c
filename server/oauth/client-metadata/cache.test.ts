import { describe, expect, it } from "vitest";
import { ClientMetadataCache } from "./cache";
import { type MetadataResult } from "./metadata";

function found(clientId: string, maxAgeS: number): MetadataResult {
  return { ok: true, maxAgeS, metadata: { clientId, name: clientId, redirectUris: ["https://a.example.com/cb"], clientUri: null, logoUri: null, raw: {} } };
}

/** A clock the test moves, and a loader that counts its calls per id. */
function harness(maxEntries?: number) {
  let now = 1_000_000;
  const cache = new ClientMetadataCache({ now: () => now, ...(maxEntries === undefined ? {} : { maxEntries }) });
  const loads: string[] = [];
  const get = (id: string, result: (id: string) => MetadataResult = (i) => found(i, 300)) =>
    cache.get(id, async () => {
      loads.push(id);
      return result(id);
    });
  return { cache, loads, get, advance: (s: number) => (now += s * 1000) };
}

describe("ClientMetadataCache", () => {
  it("serves a result for its max-age and reloads after it", async () => {
    const h = harness();
    await h.get("a", (id) => found(id, 600));
    h.advance(599);
    await h.get("a", (id) => found(id, 600));
    expect(h.loads).toEqual(["a"]);
    h.advance(2);
    await h.get("a", (id) => found(id, 600));
    expect(h.loads).toEqual(["a", "a"]);
  });

  it("holds a result for at least 60 s even when its max-age is shorter", async () => {
    const h = harness();
    await h.get("a", (id) => found(id, 1));
    h.advance(59);
    await h.get("a");
    expect(h.loads).toEqual(["a"]);
    h.advance(2);
    await h.get("a");
    expect(h.loads).toEqual(["a", "a"]);
  });

  it("holds a result for at most 24 h whatever its max-age", async () => {
    const h = harness();
    await h.get("a", (id) => found(id, 10 * 86400));
    h.advance(86400 - 1);
    await h.get("a");
    expect(h.loads).toEqual(["a"]);
    h.advance(2);
    await h.get("a");
    expect(h.loads).toEqual(["a", "a"]);
  });

  it("remembers a failure for 30 s", async () => {
    const h = harness();
    const failure = (): MetadataResult => ({ ok: false, reason: "HTTP 404" });
    expect(await h.get("a", failure)).toEqual({ ok: false, reason: "HTTP 404" });
    h.advance(29);
    expect(await h.get("a")).toEqual({ ok: false, reason: "HTTP 404" });
    expect(h.loads).toEqual(["a"]);
    h.advance(2);
    expect(await h.get("a")).toMatchObject({ ok: true });
    expect(h.loads).toEqual(["a", "a"]);
  });

  it("turns a loader that throws into a failure it remembers", async () => {
    const h = harness();
    const result = await h.cache.get("a", () => Promise.reject(new Error("boom")));
    expect(result).toMatchObject({ ok: false, reason: expect.stringContaining("boom") as unknown });
    expect(await h.get("a")).toEqual(result);
    expect(h.loads).toEqual([]);
  });

  it("evicts the least recently used entry beyond maxEntries", async () => {
    const h = harness(3);
    for (const id of ["a", "b", "c"]) await h.get(id);
    await h.get("a"); // a is now the most recently used; b the least
    await h.get("d");
    expect(h.cache.size).toBe(3);
    await h.get("a");
    await h.get("c");
    await h.get("d");
    expect(h.loads).toEqual(["a", "b", "c", "d"]);
    await h.get("b");
    expect(h.loads).toEqual(["a", "b", "c", "d", "b"]);
  });

  it("holds at most 500 entries by default", async () => {
    const h = harness();
    for (let i = 0; i <= 500; i++) await h.get(`id${i}`);
    expect(h.cache.size).toBe(500);
    await h.get("id500");
    expect(h.loads.length).toBe(501);
    await h.get("id0");
    expect(h.loads.length).toBe(502);
  });

  it("refuses a bound above 500 or below 1", () => {
    for (const maxEntries of [501, 0, 1.5]) {
      expect(() => new ClientMetadataCache({ maxEntries })).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENT" }) as unknown as Error);
    }
  });

  it("shares one load between concurrent requests for an id", async () => {
    const h = harness();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const load = async () => {
      calls++;
      await gate;
      return found("a", 300);
    };
    const first = h.cache.get("a", load);
    const second = h.cache.get("a", load);
    release();
    expect(await first).toEqual(await second);
    expect(calls).toBe(1);
  });

  it("keys by the exact client id string", async () => {
    const h = harness();
    await h.get("https://a.example.com/c");
    await h.get("https://a.example.com/c/");
    expect(h.loads).toEqual(["https://a.example.com/c", "https://a.example.com/c/"]);
  });
});
