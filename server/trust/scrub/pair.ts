import { Scrubber, redactionMarker, type RedactionReport, type RedactionSpan } from "./scrubber";

/**
 * Scrubbing a job's stdout/stderr pair, then cutting it to what is returned.
 *
 * Order: capture → scrub → cut. The launcher's capture may be
 * larger than what the hub is sent; the whole capture is scrubbed, and only
 * the scrubbed text is cut, so a credential straddling the returned size is
 * redacted whole, never half-released. Where the capture itself was cut by
 * the launcher (stdout_max_bytes), the scrubber treats the tail as possibly
 * partial (`end({ partial: true })`).
 *
 * Across the pair: the launcher captures the two pipes separately, so the
 * order in which the workload interleaved its writes is not known. What is
 * scanned is each stream alone plus the two junctions a reader naturally
 * joins: the end of stdout followed by the start of stderr, and the end of
 * stderr followed by the start of stdout (a window of 4 × the scrubber's
 * hold-back on each side). A match that crosses a junction is redacted in
 * both streams (each stream's part of it). Limits: a token split at any other
 * point (stdout mid-stream + stderr mid-stream) is not joined — without the
 * write order there is no other sound place to join, and a workload can
 * split a secret itself anyway (`echo ${T:0:8}; echo ${T:8}`). A junction
 * match may also take a few bytes of the other stream's start when they
 * continue a token's alphabet (over-redaction, never under).
 */

export interface PairInput {
  stdout: Buffer;
  stderr: Buffer;
  /** The launcher cut this stream at its capture cap (its tail may be a partial secret). */
  stdoutCut?: boolean;
  stderrCut?: boolean;
}

export interface ScrubbedPair {
  stdout: Buffer;
  stderr: Buffer;
  /** Redactions over the whole scrubbed capture (some may lie past the returned size). */
  report: RedactionReport;
  /** The raw output contained terminal control bytes (ESC sequences, other C0 controls, DEL). */
  terminalControls: boolean;
  /** The returned text is shorter than the scrubbed capture. */
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
}

const CHUNK = 64 * 1024;

interface StreamScrub {
  output: Buffer;
  spans: RedactionSpan[];
  report: RedactionReport;
  controls: boolean;
}

function scrubOne(raw: Buffer, partial: boolean, dlp: unknown): StreamScrub {
  const spans: RedactionSpan[] = [];
  const s = new Scrubber({ ...(dlp === undefined ? {} : { dlp }), onRedact: (span) => spans.push(span) });
  const parts: Buffer[] = [];
  for (let off = 0; off < raw.length; off += CHUNK) parts.push(s.push(raw.subarray(off, off + CHUNK)));
  parts.push(s.end({ partial }));
  return { output: Buffer.concat(parts), spans, report: s.report(), controls: s.sawTerminalControls };
}

/** Spans (in each stream's own offsets) of matches that cross the junction a|b. */
function junction(a: Buffer, b: Buffer, dlp: unknown): { inA: RedactionSpan[]; inB: RedactionSpan[] } {
  const inA: RedactionSpan[] = [];
  const inB: RedactionSpan[] = [];
  if (a.length === 0 || b.length === 0) return { inA, inB };
  const probe = new Scrubber(dlp === undefined ? {} : { dlp });
  const w = 4 * probe.holdbackLimit;
  const tail = a.subarray(Math.max(0, a.length - w));
  const head = b.subarray(0, w);
  const j = tail.length;
  const aBase = a.length - j;
  const spans: RedactionSpan[] = [];
  const s = new Scrubber({ ...(dlp === undefined ? {} : { dlp }), onRedact: (span) => spans.push(span) });
  s.push(tail);
  s.push(head);
  // A match running into the window's own end would be cut there: that end is
  // not the stream's, so only a match inside the window counts.
  s.end();
  for (const span of spans) {
    if (!(span.matchStart < j && span.matchEnd > j)) continue;
    if (span.start < j) inA.push({ ...span, start: aBase + span.start, end: a.length, matchStart: aBase + span.matchStart, matchEnd: a.length });
    if (span.end > j) inB.push({ ...span, start: Math.max(span.start, j) - j, end: span.end - j, matchStart: 0, matchEnd: span.matchEnd - j });
  }
  return { inA, inB };
}

/** Rebuilds a stream from its raw bytes and the union of its redaction spans. */
function applySpans(raw: Buffer, spans: RedactionSpan[]): { output: Buffer; count: number; kinds: string[] } {
  const sorted = [...spans].sort((x, y) => x.start - y.start || y.end - x.end);
  const merged: Array<{ start: number; end: number; kind: string; kinds: Set<string> }> = [];
  for (const sp of sorted) {
    const last = merged[merged.length - 1];
    if (last !== undefined && sp.start < last.end) {
      last.end = Math.max(last.end, sp.end);
      last.kinds.add(sp.kind);
    } else merged.push({ start: sp.start, end: sp.end, kind: sp.kind, kinds: new Set([sp.kind]) });
  }
  const parts: Buffer[] = [];
  let at = 0;
  const kinds = new Set<string>();
  for (const m of merged) {
    parts.push(raw.subarray(at, m.start), Buffer.from(redactionMarker(m.kind, raw.subarray(m.start, m.end).toString("latin1")), "latin1"));
    at = m.end;
    for (const k of m.kinds) kinds.add(k);
  }
  parts.push(raw.subarray(at));
  return { output: Buffer.concat(parts), count: merged.length, kinds: [...kinds] };
}

const MARKER_HEAD = Buffer.from("[REDACTED:");

/**
 * Cuts scrubbed text to `max` bytes. A cut that would fall inside a
 * `[REDACTED:kind]` marker is moved to the marker's start, so the returned
 * text never ends in half a marker (which would read as a partial secret).
 */
export function cutScrubbed(scrubbed: Buffer, max: number): { output: Buffer; truncated: boolean } {
  if (scrubbed.length <= max) return { output: scrubbed, truncated: false };
  let cut = max;
  // The last marker that starts before the cut (markers are < 80 bytes).
  const from = Math.max(0, max - 80);
  const at = scrubbed.subarray(from, Math.min(scrubbed.length, max + MARKER_HEAD.length)).lastIndexOf(MARKER_HEAD);
  const start = at < 0 ? -1 : from + at;
  if (start >= 0 && start < max) {
    const close = scrubbed.indexOf(0x5d, start);
    if (close === -1 || close >= max) cut = start;
  } else if (start < 0 || start >= max) {
    // A cut inside a marker's head itself ("[RED"): look for a head starting just before the cut.
    for (let i = Math.max(0, max - MARKER_HEAD.length + 1); i < max; i++) {
      if (scrubbed.subarray(i, i + MARKER_HEAD.length).equals(MARKER_HEAD)) {
        cut = i;
        break;
      }
    }
  }
  return { output: scrubbed.subarray(0, cut), truncated: true };
}

/** Scrubs both streams (each whole, plus the two junctions), then cuts each to `returnMax`. */
export function scrubPair(input: PairInput, options: { returnMax?: number; dlp?: unknown } = {}): ScrubbedPair {
  const { dlp } = options;
  const out = scrubOne(input.stdout, input.stdoutCut === true, dlp);
  const err = scrubOne(input.stderr, input.stderrCut === true, dlp);
  const outErr = junction(input.stdout, input.stderr, dlp);
  const errOut = junction(input.stderr, input.stdout, dlp);
  const extraOut = [...outErr.inA, ...errOut.inB];
  const extraErr = [...outErr.inB, ...errOut.inA];
  let stdout = out.output;
  let stderr = err.output;
  let countOut = out.report.count;
  let countErr = err.report.count;
  const kinds = new Set([...out.report.kinds, ...err.report.kinds]);
  if (extraOut.length > 0) {
    const r = applySpans(input.stdout, [...out.spans, ...extraOut]);
    stdout = r.output;
    countOut = r.count;
    for (const k of r.kinds) kinds.add(k);
  }
  if (extraErr.length > 0) {
    const r = applySpans(input.stderr, [...err.spans, ...extraErr]);
    stderr = r.output;
    countErr = r.count;
    for (const k of r.kinds) kinds.add(k);
  }
  const max = options.returnMax ?? Infinity;
  const cutOut = cutScrubbed(stdout, max);
  const cutErr = cutScrubbed(stderr, max);
  return {
    stdout: cutOut.output,
    stderr: cutErr.output,
    report: { count: countOut + countErr, kinds: [...kinds].sort() },
    terminalControls: out.controls || err.controls,
    stdoutTruncated: cutOut.truncated,
    stderrTruncated: cutErr.truncated,
  };
}
