import { describe, expect, it } from "vitest";
import { LeaseholdError } from "../errors";
import { ENTRY_TYPES, MAX_ENTRY_BYTES, decodeEntry, digestOf, encodeEntry, hashActor, tryEncodeEntry, type EntryInput } from "./entry";
import { sampleEntries } from "./testdata/fixtures";

const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
const samples = sampleEntries();

function mutate(input: EntryInput, edit: (value: Record<string, unknown>) => void): EntryInput {
  const copy = structuredClone(input) as unknown as Record<string, unknown>;
  edit(copy);
  return copy as unknown as EntryInput;
}

describe("entries", () => {
  it("has a sample for every type in the closed list", () => {
    expect(Object.keys(samples).sort()).toEqual([...ENTRY_TYPES].sort());
    expect(ENTRY_TYPES.every((t) => /^[a-z][a-z_-]*\/[1-9][0-9]*$/.test(t))).toBe(true);
  });

  it.each(ENTRY_TYPES)("%s round-trips through canonical bytes", (type) => {
    const bytes = encodeEntry(samples[type]);
    const decoded = decodeEntry(bytes);
    expect(decoded).toEqual({ ok: true, entry: samples[type] });
    expect(Object.keys(JSON.parse(text(bytes)))).toEqual(["action_id", "actor", "data", "time", "type"]);
  });

  it("accepts a Date and stores its ISO form", () => {
    const bytes = encodeEntry({ ...samples["session/1"], time: new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 6)) });
    expect(text(bytes)).toContain('"time":"2025-01-02T03:04:05.006Z"');
  });

  it.each([
    ["a raw argument field", (v: Record<string, unknown>) => ((v.data as Record<string, unknown>).command = "rm -rf /")],
    ["raw output", (v: Record<string, unknown>) => ((v.data as Record<string, unknown>).stdout = "secret")],
    ["an unknown top-level field", (v: Record<string, unknown>) => (v.arguments = {})],
    ["a missing field", (v: Record<string, unknown>) => delete (v.data as Record<string, unknown>).policy_digest],
    ["an unknown type", (v: Record<string, unknown>) => (v.type = "decision/2")],
    ["an unhashed actor", (v: Record<string, unknown>) => (v.actor = "alice@example.com")],
    ["an uppercase digest", (v: Record<string, unknown>) => ((v.data as Record<string, unknown>).action_hash = `sha256:${"A".repeat(64)}`)],
    ["free text in an id", (v: Record<string, unknown>) => ((v.data as Record<string, unknown>).host_id = "my host; rm -rf")],
    ["a non-UTC time", (v: Record<string, unknown>) => (v.time = "2025-03-01T10:00:00+01:00")],
    ["an impossible date", (v: Record<string, unknown>) => (v.time = "2025-02-30T10:00:00.000Z")],
    ["an unknown risk level", (v: Record<string, unknown>) => ((v.data as Record<string, unknown>).risk = "catastrophic")],
  ])("rejects %s", (_, edit) => {
    const bad = mutate(samples["decision/1"], edit);
    expect(tryEncodeEntry(bad).ok).toBe(false);
    expect(() => encodeEntry(bad)).toThrow(LeaseholdError);
  });

  it("refuses critical grants and oversized entries", () => {
    const grant = mutate(samples["grant/1"], (v) => ((v.data as Record<string, unknown>).risk_ceiling = "critical"));
    expect(tryEncodeEntry(grant).ok).toBe(false);
    const artifacts = Array.from({ length: 16 }, () => ({ name: "x".repeat(32), sha256: "a".repeat(64), bytes: 1, truncated: false }));
    const big = mutate(samples["evidence/1"], (v) => ((v.data as Record<string, unknown>).artifacts = artifacts));
    expect(tryEncodeEntry(big).ok).toBe(true);
    expect(encodeEntry(big).length).toBeLessThan(MAX_ENTRY_BYTES);
  });

  it("decodes only canonical bytes of valid entries", () => {
    const bytes = encodeEntry(samples["token/1"]);
    const spaced = new TextEncoder().encode(text(bytes).replace(":", ": "));
    expect(decodeEntry(spaced)).toMatchObject({ ok: false, reason: expect.stringMatching(/canonical/) });
    const parsed = JSON.parse(text(bytes)) as Record<string, unknown>;
    parsed.extra = 1;
    const keys = Object.keys(parsed).sort();
    const reordered = `{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(parsed[k])}`).join(",")}}`;
    expect(decodeEntry(new TextEncoder().encode(reordered)).ok).toBe(false);
    expect(decodeEntry(new Uint8Array(MAX_ENTRY_BYTES + 1)).ok).toBe(false);
    expect(decodeEntry(Uint8Array.of(0xc3)).ok).toBe(false);
  });
});

describe("hashActor", () => {
  it("is deterministic, domain-separated by kind, and keyed when peppered", () => {
    const a = hashActor("admin", "alice");
    expect(a).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(hashActor("admin", "alice")).toBe(a);
    expect(hashActor("token", "alice")).not.toBe(a);
    expect(a).not.toBe(digestOf("alice"));
    const peppered = hashActor("admin", "alice", new Uint8Array(32).fill(1));
    expect(peppered).not.toBe(a);
    expect(hashActor("admin", "alice", new Uint8Array(32).fill(2))).not.toBe(peppered);
    expect(() => hashActor("admin", "")).toThrow(LeaseholdError);
    expect(() => hashActor("nobody" as "admin", "x")).toThrow(LeaseholdError);
  });
});
