import { describe, expect, it } from "vitest";
import { Scrubber, redactionMarker, scrubWindow, windowContext, type RedactionSpan } from "./index";
import { ALL_CASES } from "./test/corpus";

/**
 * fs_read pages (window.ts): for every offset and page size, a page equals
 * the requested window of the WHOLE file's scrubbed form — bytes outside a
 * redaction unchanged, the overlapping part of each redaction one marker —
 * so no split of the file into pages releases any byte of a secret.
 */

const bytes = (v: string | Buffer) => (typeof v === "string" ? Buffer.from(v, "utf8") : v);

function wholeSpans(file: Buffer): RedactionSpan[] {
  const spans: RedactionSpan[] = [];
  const s = new Scrubber({ onRedact: (span) => spans.push(span) });
  s.push(file);
  s.end();
  return spans;
}

/** The reference: the window [offset, offset+length) cut out of the whole file's redactions. */
function expected(file: Buffer, spans: RedactionSpan[], offset: number, length: number): string {
  const raw = file.toString("latin1");
  const end = Math.min(file.length, offset + length);
  let out = "";
  let cursor = offset;
  for (const sp of spans) {
    if (sp.end <= offset || sp.start >= end) continue;
    const a = Math.max(sp.start, offset);
    const b = Math.min(sp.end, end);
    out += raw.slice(cursor, a) + redactionMarker(sp.kind, raw.slice(a, b));
    cursor = b;
  }
  return out + raw.slice(cursor, end);
}

/** What the workspace does: read the window plus the context on each side of it. */
function page(file: Buffer, offset: number, length: number, context: number) {
  const from = Math.max(0, offset - context);
  const to = Math.min(file.length, offset + length + context);
  return scrubWindow({ bytes: file.subarray(from, to), from, offset, length, total: file.length });
}

const positive = ALL_CASES.filter((c) => c.count > 0);
const CONTEXT = windowContext();

describe("fs_read windows", () => {
  // A page's output depends only on where its two ends fall against the
  // redactions' edges, so every end within 4 bytes of an edge (either side),
  // the file's own ends, and a stride of 7 in between cover every case the
  // full sweep (every offset × every length) does, at a fraction of its
  // cost: it grows with the square of the case's length.
  it.each(positive.map((c) => [c.name, c] as const))("every start and end near a redaction's edge, and every 7th between: %s", (_name, c) => {
    const file = bytes(c.input);
    const spans = wholeSpans(file);
    const points = new Set<number>([0, file.length]);
    for (let at = 0; at <= file.length; at += 7) points.add(at);
    for (const sp of spans) for (let k = -4; k <= 4; k++) points.add(sp.start + k).add(sp.end + k);
    const ends = [...points].filter((p) => p >= 0 && p <= file.length).sort((a, b) => a - b);
    let pages = 0;
    for (const offset of ends) {
      for (const end of ends) {
        if (end <= offset) continue;
        const length = end - offset;
        pages += 1;
        const got = page(file, offset, length, CONTEXT).output.toString("latin1");
        if (got !== expected(file, spans, offset, length)) {
          expect({ offset, length, got }).toEqual({ offset, length, got: expected(file, spans, offset, length) });
        }
      }
    }
    expect(pages).toBeGreaterThan(0);
  });

  it("with more file than context on both sides, every offset near each secret's edges and inside it", () => {
    // One row per kind; padding longer than the context, so the context is what the window sees.
    const byKind = new Map<string, (typeof positive)[number]>();
    for (const c of positive) if (!byKind.has(c.kinds.join())) byKind.set(c.kinds.join(), c);
    const pad = Buffer.from("2026-01-01 INFO worker handled request status=200\n".repeat(Math.ceil((CONTEXT + 4096) / 51)));
    for (const c of byKind.values()) {
      const file = Buffer.concat([pad, bytes(c.input), pad]);
      const spans = wholeSpans(file);
      const offsets = new Set<number>();
      for (const sp of spans) {
        for (let k = -2; k <= 5; k++) offsets.add(sp.start + k).add(sp.end - k);
        offsets.add((sp.start + sp.end) >> 1);
      }
      for (const offset of offsets) {
        for (const length of [1, 64]) {
          expect(page(file, offset, length, CONTEXT).output.toString("latin1"), `${c.name} @${offset}+${length}`).toBe(expected(file, spans, offset, length));
        }
      }
    }
  });

  it("reports only the redactions that overlap the returned window", () => {
    const file = Buffer.from("a " + "gh" + "p_" + "A".repeat(36) + " middle " + "gl" + "pat-" + "B".repeat(20) + " end");
    const at = file.indexOf("middle");
    expect(page(file, at, 6, CONTEXT).report).toEqual({ count: 0, kinds: [] });
    expect(page(file, at, file.length - at, CONTEXT).report).toEqual({ count: 1, kinds: ["gitlab_token"] });
  });

  it("refuses a widened read that does not cover the window", () => {
    const file = Buffer.from("0123456789");
    expect(() => scrubWindow({ bytes: file.subarray(2, 5), from: 2, offset: 1, length: 3, total: 10 })).toThrow(/does not cover/);
  });
});
