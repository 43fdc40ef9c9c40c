import { describe, expect, it } from "vitest";
import { clampTtl, parseCursor, TASK_TTL } from "./store";

describe("task ttl and cursors", () => {
  it("a requested ttl is clamped to 1 min – 24 h; none, or not a finite number, is the default", () => {
    expect(clampTtl(undefined)).toBe(TASK_TTL.defaultMs);
    expect(clampTtl(null)).toBe(TASK_TTL.defaultMs);
    expect(clampTtl(Number.NaN)).toBe(TASK_TTL.defaultMs);
    expect(clampTtl(Number.POSITIVE_INFINITY)).toBe(TASK_TTL.defaultMs);
    expect(clampTtl(1)).toBe(60_000);
    expect(clampTtl(-5)).toBe(60_000);
    expect(clampTtl(90_000.7)).toBe(90_000);
    expect(clampTtl(1e12)).toBe(24 * 60 * 60_000);
  });

  it("a cursor the hub issues parses back; anything else is refused", () => {
    const at = "2026-12-06T10:00:00.000Z";
    const id = "33333333-3333-4333-8333-333333333333";
    const cursor = Buffer.from(`${at}|${id}`).toString("base64url");
    expect(parseCursor(cursor)).toEqual({ createdAt: new Date(at), id });
    for (const forged of [
      "",
      "garbage",
      Buffer.from(`${at}|not-a-uuid`).toString("base64url"),
      Buffer.from(`yesterday|${id}`).toString("base64url"),
      Buffer.from(`${at}|${id}|extra`).toString("base64url"),
      Buffer.from(`2026-12-06T10:00:00Z|${id}`).toString("base64url"),
      "A".repeat(201),
    ]) {
      expect(parseCursor(forged), forged.slice(0, 40)).toBeNull();
    }
  });
});
