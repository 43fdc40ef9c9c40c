import { Scrubber, redactionMarker, type RedactionReport, type RedactionSpan } from "./scrubber";

/**
 * Scrubbing one window of a longer source (an `fs_read` page) so that where
 * the window starts and ends cannot cut a secret out of its pattern.
 *
 * The caller reads the window plus `windowContext()` bytes on each side (from
 * one descriptor: agent-guest/workspace `read({ context })`). The widened
 * read is scrubbed as a stream, then the requested window is cut out of it:
 * bytes outside every redaction pass unchanged, and the part of any
 * redaction that overlaps the window is replaced by one marker. A read
 * starting three bytes into a token therefore returns `[REDACTED:…]` for the
 * rest of it, never the body.
 *
 * Why the context is enough: a match is at most `maxLength` bytes, a
 * proximity rule (an AWS secret after its key id) reaches back a window
 * plus the anchor's length, and a look-behind a few bytes more; the context
 * covers twice the scrubber's hold-back plus those, so every match that
 * overlaps the window starts inside the widened read, and the widened
 * read's cut ends lie far enough away that a partial secret there cannot
 * reach the window.
 */

export interface WindowInput {
  /** The widened read: the window plus context on each side. */
  bytes: Buffer;
  /** File offset of bytes[0]. */
  from: number;
  /** The requested window, in file offsets. */
  offset: number;
  length: number;
  /** Size of the whole source (the widened read ends before it: its tail may be a partial secret). */
  total: number;
}

export interface ScrubbedWindow {
  output: Buffer;
  /** Redactions that overlap the returned window. */
  report: RedactionReport;
  /** The returned window contains terminal control bytes. */
  terminalControls: boolean;
}

// eslint-disable-next-line no-control-regex -- matching control bytes is the point
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;

/** Bytes of context to read on each side of a window (for the built-in patterns plus `dlp`). */
export function windowContext(dlp?: unknown): number {
  return new Scrubber(dlp === undefined ? {} : { dlp }).windowContext;
}

export function scrubWindow(input: WindowInput, options: { dlp?: unknown } = {}): ScrubbedWindow {
  const { bytes, from, offset, length, total } = input;
  const spans: RedactionSpan[] = [];
  const s = new Scrubber({ ...(options.dlp === undefined ? {} : { dlp: options.dlp }), onRedact: (span) => spans.push(span) });
  if (from > offset || from + bytes.length < Math.min(total, offset + length)) {
    throw new Error("scrubWindow: the widened read does not cover the window");
  }
  const chunk = 64 * 1024;
  for (let o = 0; o < bytes.length; o += chunk) s.push(bytes.subarray(o, o + chunk));
  s.end({ partial: from + bytes.length < total });
  const w0 = offset - from;
  const w1 = Math.min(bytes.length, w0 + length);
  const raw = bytes.toString("latin1");
  const parts: string[] = [];
  const kinds = new Set<string>();
  let count = 0;
  let cursor = w0;
  for (const span of spans) {
    if (span.end <= w0 || span.start >= w1) continue;
    const a = Math.max(span.start, w0);
    const b = Math.min(span.end, w1);
    parts.push(raw.slice(cursor, a), redactionMarker(span.kind, raw.slice(a, b)));
    cursor = b;
    count++;
    kinds.add(span.kind);
  }
  parts.push(raw.slice(cursor, w1));
  return {
    output: Buffer.from(parts.join(""), "latin1"),
    report: { count, kinds: [...kinds].sort() },
    terminalControls: CONTROL.test(raw.slice(w0, w1)),
  };
}
