/**
 * The scrubber as it was before issue 12 (commit b67aaac), kept only so the
 * bench can measure the current engine against it in the same run. Not used
 * by anything else.
 */
import { Transform, type TransformCallback } from "node:stream";
import { BUILTIN_PATTERNS, compileDlpPatterns, type CompiledPattern } from "./patterns";

/**
 * The guest's output scrubber: credentials first, then the operator's DLP
 * patterns, applied to stdout/stderr before a byte leaves the host
 * (DESIGN.md "The life of one action", step 10). Tier: guest transform — it
 * changes what leaves the host; it cannot stop the workload from reading or
 * using a secret inside the sandbox.
 *
 * Contract, each part proved in scrubber.test.ts:
 *  - Streaming equals whole-text: for every way of cutting the input into
 *    chunks, the concatenated output equals scrubbing the whole input at once.
 *    A secret split across chunks is still redacted.
 *  - Byte-exact outside matches: input is handled as bytes (latin1 view), so
 *    invalid UTF-8 and binary data pass through unchanged; only the bytes of a
 *    match (or of its `s` group) are replaced by `[REDACTED:<kind>]`.
 *  - Bounded memory: at most `holdbackLimit` bytes of not-yet-released input
 *    are held, and only while a match could still be in progress there.
 *  - No raw copy: the scrubber never stores released or redacted input; the
 *    only raw bytes it holds are that bounded pending tail plus one byte of
 *    look-behind context, dropped by `end()`.
 *
 * Matching semantics (what "the whole text at once" means): scanning left to
 * right, at each step the leftmost match among all patterns wins, ties go to
 * the earlier pattern (built-ins in their listed order, then DLP patterns in
 * configured order), and scanning resumes after the match. A pattern with a
 * `near` rule only counts when a match of the named kind ended at most
 * `window` bytes before it starts.
 */

export interface RedactionReport {
  count: number;
  /** Sorted, unique. */
  kinds: string[];
}

export interface ScrubberOptions {
  /** Operator DLP patterns, validated by compileDlpPatterns (refused → INVALID_ARGUMENT). */
  dlp?: unknown;
}

/** Input larger than this is processed in slices so one huge chunk does not build one huge string. */
const SLICE = 1 << 20;

interface Candidate {
  start: number;
  end: number;
  redactStart: number;
  redactEnd: number;
  pattern: CompiledPattern;
}

export class Scrubber {
  private readonly patterns: readonly CompiledPattern[];
  /** Input not yet released, as latin1 (one char per byte). */
  private pending = "";
  /** Up to `context` chars of input just before `pending` (look-behind). */
  private ctx = "";
  /** Absolute stream offset of pending[0]. */
  private base = 0;
  private readonly context: number;
  private readonly lastEndByKind = new Map<string, number>();
  private redactions = 0;
  private readonly kindSet = new Set<string>();
  private ended = false;
  /** Upper bound on bytes ever held back (pending), from the patterns' bounds. */
  readonly holdbackLimit: number;

  constructor(options: ScrubberOptions = {}) {
    const dlp = options.dlp === undefined ? [] : compileDlpPatterns(options.dlp);
    this.patterns = [...BUILTIN_PATTERNS, ...dlp];
    this.context = Math.max(1, ...this.patterns.map((p) => p.bounds.lookbehind));
    this.holdbackLimit = Math.max(...this.patterns.map((p) => p.bounds.maxLength + p.bounds.lookahead + p.triggerLength));
  }

  /** Scrubs the next chunk; returns the bytes that may now leave the host (possibly empty). */
  push(chunk: Uint8Array): Buffer {
    if (this.ended) throw new Error("Scrubber.push after end()");
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (buf.length <= SLICE) return this.process(buf.toString("latin1"), false);
    const out: Buffer[] = [];
    for (let off = 0; off < buf.length; off += SLICE) {
      out.push(this.process(buf.subarray(off, Math.min(buf.length, off + SLICE)).toString("latin1"), false));
    }
    return Buffer.concat(out);
  }

  /** Releases the held-back tail (scrubbed). The scrubber cannot be used afterwards. */
  end(): Buffer {
    if (this.ended) return Buffer.alloc(0);
    const out = this.process("", true);
    this.ended = true;
    this.pending = "";
    this.ctx = "";
    return out;
  }

  report(): RedactionReport {
    return { count: this.redactions, kinds: [...this.kindSet].sort() };
  }

  /** Bytes currently held back (for tests and metrics). */
  get heldBytes(): number {
    return this.pending.length;
  }

  private process(input: string, final: boolean): Buffer {
    const text = this.ctx + this.pending + input;
    const off = this.ctx.length;
    const absAt = (i: number) => this.base + (i - off);
    const parts: string[] = [];
    let emitted = off;
    let pos = off;
    const cache = new Map<CompiledPattern, Candidate | null>();
    let safeEnd = final ? text.length : this.safeEnd(text, pos, absAt);

    for (;;) {
      const m = this.nextMatch(text, pos, cache, absAt);
      if (!m || m.start >= safeEnd) break;
      parts.push(text.slice(emitted, m.redactStart), `[REDACTED:${m.pattern.kind}]`);
      emitted = m.redactEnd;
      pos = m.end;
      this.redactions++;
      this.kindSet.add(m.pattern.kind);
      this.lastEndByKind.set(m.pattern.kind, absAt(m.end));
      // Cached candidates at or after `pos` stay valid (the leftmost match from
      // an earlier position that lies ahead is still the leftmost); only rules
      // that depend on this kind's last match must search again.
      for (const p of this.patterns) if (p.near?.kind === m.pattern.kind) cache.delete(p);
      if (!final) safeEnd = this.safeEnd(text, pos, absAt);
    }

    const commit = Math.max(pos, safeEnd);
    parts.push(text.slice(emitted, commit));
    this.base = absAt(commit);
    this.pending = text.slice(commit);
    this.ctx = text.slice(Math.max(0, commit - this.context), commit);
    return parts.length === 1 ? Buffer.from(parts[0] ?? "", "latin1") : Buffer.from(parts.join(""), "latin1");
  }

  /**
   * The first index ≥ pos at which some pattern's decision could still change
   * with more input. Before it, every pattern's match-or-not is final.
   */
  private safeEnd(text: string, pos: number, absAt: (i: number) => number): number {
    let safe = text.length;
    for (const p of this.patterns) {
      const reach = p.bounds.maxLength + p.bounds.lookahead;
      const windowStart = Math.max(pos, text.length - reach);
      let unsettled: number;
      if (p.near) {
        const last = this.lastEndByKind.get(p.near.kind);
        // Settled unless an anchor match is near enough to the tail.
        unsettled = last !== undefined && absAt(windowStart) - last <= p.near.window ? windowStart : text.length;
      } else if (p.trigger === null) {
        unsettled = windowStart;
      } else {
        unsettled = Math.max(pos, text.length - p.triggerLength + 1);
        p.trigger.lastIndex = windowStart;
        const hit = p.trigger.exec(text);
        if (hit && hit.index < unsettled) unsettled = hit.index;
      }
      if (unsettled < safe) safe = unsettled;
    }
    return safe;
  }

  private nextMatch(
    text: string,
    pos: number,
    cache: Map<CompiledPattern, Candidate | null>,
    absAt: (i: number) => number,
  ): Candidate | null {
    let best: Candidate | null = null;
    for (const p of this.patterns) {
      let c = cache.get(p);
      if (c === undefined || (c !== null && c.start < pos)) {
        c = this.search(p, text, pos, absAt);
        cache.set(p, c);
      }
      if (c && (best === null || c.start < best.start)) best = c;
    }
    return best;
  }

  private search(p: CompiledPattern, text: string, pos: number, absAt: (i: number) => number): Candidate | null {
    let haystack = text;
    let limit = Infinity;
    if (p.near) {
      const last = this.lastEndByKind.get(p.near.kind);
      if (last === undefined) return null;
      // Text index of the last start this rule allows.
      limit = last + p.near.window - absAt(0);
      if (limit < pos) return null;
      // Scan only the window (plus what a match there can read), not the whole text.
      const stop = limit + p.bounds.maxLength + p.bounds.lookahead + 1;
      if (stop < text.length) haystack = text.slice(0, stop);
    }
    p.regex.lastIndex = pos;
    const m = p.regex.exec(haystack);
    if (!m || m.index > limit) return null;
    const start = m.index;
    const end = start + m[0].length;
    let redactStart = start;
    let redactEnd = end;
    if (p.secretGroup) {
      const span = m.indices?.groups?.s;
      if (span) [redactStart, redactEnd] = span;
    }
    return { start, end, redactStart, redactEnd, pattern: p };
  }
}

/** Scrubs a whole buffer at once (the reference the stream must equal). */
export function scrubBuffer(input: Uint8Array, options: ScrubberOptions = {}): { output: Buffer; report: RedactionReport } {
  const s = new Scrubber(options);
  const head = s.push(input);
  const tail = s.end();
  return { output: Buffer.concat([head, tail]), report: s.report() };
}

/**
 * A Transform stream over a Scrubber. `onReport` receives the redaction
 * report once, when the stream ends. Object mode off; chunks are Buffers.
 */
export function createScrubStream(options: ScrubberOptions & { onReport?: (report: RedactionReport) => void } = {}): Transform {
  const scrubber = new Scrubber(options);
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      try {
        const out = scrubber.push(chunk);
        callback(null, out.length > 0 ? out : undefined);
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback: TransformCallback) {
      try {
        const out = scrubber.end();
        options.onReport?.(scrubber.report());
        callback(null, out.length > 0 ? out : undefined);
      } catch (error) {
        callback(error as Error);
      }
    },
  });
}
