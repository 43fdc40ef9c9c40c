import { Transform, type TransformCallback } from "node:stream";
import { builtinPatterns, compileDlpPatterns, type CompiledPattern } from "./patterns";

/**
 * The guest's output scrubber: credentials first, then the operator's DLP
 * patterns, applied to stdout/stderr before a byte leaves the host
 * (docs/design.md#pipeline, step 11; docs/design.md#scrub). Tier: guest transform — it
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
 *    only raw bytes it holds are that bounded pending tail (its view and its
 *    raw bytes), the patterns' look-behind context and at most five bytes of
 *    an unfinished UTF-8 character or escape, dropped by `end()`.
 *  - At a cut (`end({ partial: true })`), a possibly-partial secret at the
 *    end is redacted to the end instead of released (pair.test.ts).
 *
 * Normalisation: patterns match a VIEW of the stream from which
 * escape sequences (CSI ≤ 64 bytes, nF, two-byte ESC sequences), NUL, the
 * other C0 controls except TAB/LF/CR, and DEL are removed, so a key split by
 * an ANSI reset or a NUL, or written as UTF-16 (every other byte NUL), is
 * matched whole. Redaction is applied to the raw bytes: the view keeps a map
 * (breakpoints) from view offsets to raw offsets for the pending tail only.
 * An OSC/DCS string's content stays in the view; its terminator (BEL, ESC \)
 * stays as a separator. Also removed: every Default_Ignorable_Code_Point
 * (zero-width characters, soft hyphen, BOM, variation selectors, tag
 * characters) in its UTF-8 form; and `\uXXXX` / `\xXX` escapes are decoded
 * to the ASCII character they spell (removed when they spell an ignorable or
 * a control), so `lh\u005f…` is matched as `lh_…`. A decoded character keeps
 * its raw width, so a redaction ending on it covers the whole escape.
 *
 * Rule set: derived from @secretlint/secretlint-rule-preset-recommend 13.0.7
 * (rule per format named in patterns.ts) rather than run through
 * @secretlint/core: on the corpus secretlint found 24 of 72 positive rows,
 * this engine redacts 72 (the pre-issue-12 one 51), neither flags any of 43
 * near-misses, and lintSource (async, whole sources, ranges only) was of the
 * same speed order on 64 KiB windows (18–49 MB/s here vs 20–44 MB/s,
 * scrub.bench.ts, server/trust/scrub/README.md).
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

/** One redaction, in absolute raw byte offsets of the stream (for the stdout/stderr pair merge). */
export interface RedactionSpan {
  kind: string;
  /** Where the match (including context such as `Bearer `) starts and ends. */
  matchStart: number;
  matchEnd: number;
  /** The bytes replaced by the marker. */
  start: number;
  end: number;
}

export interface ScrubberOptions {
  /** Operator DLP patterns, validated by compileDlpPatterns (refused → INVALID_ARGUMENT). */
  dlp?: unknown;
  /** Called for every redaction, in stream order, with raw byte offsets. */
  onRedact?: (span: RedactionSpan) => void;
}

export interface EndOptions {
  /**
   * The stream was cut (a capture cap, a read limit): its last bytes may be
   * the first part of a credential. A trigger of a credential format (such
   * as `ghp_`, `-----BEGIN `, `Bearer`) still within that format's maximum
   * length of the cut, and any match that touches the cut, is redacted from
   * its start to the end instead of being released.
   */
  partial?: boolean;
}

/** A trailing run of AWS-secret alphabet, long enough to be a secret's first part (at a cut). */
const NEAR_TAIL = /(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{8,39}$/;

/** Input larger than this is processed in slices so one huge chunk does not build one huge string. */
const SLICE = 1 << 20;

interface Candidate {
  start: number;
  end: number;
  redactStart: number;
  redactEnd: number;
  pattern: CompiledPattern;
}

// Normaliser states (the view patterns are matched on; see Normalisation above).
const N_TEXT = 0;
const N_ESC = 1;
const N_CSI = 2;
const N_NF = 3;
/** Longest CSI / nF escape treated as one; past it the bytes are text again (a terminal would show them too). */
const MAX_ESCAPE = 64;

// Withheld sequences (see Normalisation above).
const HELD_UTF8 = 0;
const HELD_ESCAPE = 1;

/**
 * Unicode's Default_Ignorable_Code_Point set, from the regex engine's own
 * property tables. Every such code point lies in planes 0, 1 and 14
 * (scrubber.test.ts checks the whole code space against the property).
 */
const DEFAULT_IGNORABLE: ReadonlySet<number> = (() => {
  const di = /^\p{Default_Ignorable_Code_Point}$/u;
  const set = new Set<number>();
  for (const [lo, hi] of [[0, 0x1ffff], [0xe0000, 0xeffff]] as const) {
    for (let cp = lo; cp <= hi; cp++) if ((cp < 0xd800 || cp > 0xdfff) && di.test(String.fromCodePoint(cp))) set.add(cp);
  }
  return set;
})();

/** First bytes of the UTF-8 encodings of those code points: only these start a withheld sequence. */
const IGNORABLE_LEAD: ReadonlySet<number> = new Set([...DEFAULT_IGNORABLE].map((cp) => Buffer.from(String.fromCodePoint(cp), "utf8")[0] ?? 0));

/** A latin1-view regex class of single bytes. */
const byteClass = (bytes: Iterable<number>) => `[${[...bytes].map((b) => `\\x${b.toString(16).padStart(2, "0")}`).join("")}]`;

/** Bytes that may start something the view changes: a control, DEL, a backslash, the first byte of an ignorable. */
const MAYBE_SLOW = new RegExp(`[\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f\\\\${byteClass(IGNORABLE_LEAD).slice(1, -1)}]`, "g");

/**
 * Whether the normaliser must look at this input byte by byte: it holds a
 * dropped byte, a `\\u`/`\\x` escape, an ignorable's UTF-8 encoding, or ends
 * in what may be the first part of one. Other backslashes and other UTF-8
 * stay on the fast path.
 */
function needsSlowPath(raw: string): boolean {
  MAYBE_SLOW.lastIndex = 0;
  for (let m = MAYBE_SLOW.exec(raw); m !== null; m = MAYBE_SLOW.exec(raw)) {
    const i = m.index;
    const c = raw.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
    if (c === 0x5c) {
      if (i + 1 >= raw.length) return true;
      const d = raw.charCodeAt(i + 1);
      if (d === 0x75 || d === 0x78) return true;
      continue;
    }
    const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    if (i + need > raw.length) return true;
    let complete = true;
    for (let k = 1; k < need && complete; k++) {
      const b = raw.charCodeAt(i + k);
      complete = b >= 0x80 && b <= 0xbf;
    }
    if (complete && DEFAULT_IGNORABLE.has(decodeUtf8(raw.slice(i, i + need)))) return true;
  }
  return false;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** Bytes that are visible as they are in text state (not a control, DEL, backslash or a possible ignorable's first byte). */
const PLAIN = new Uint8Array(256);
for (let b = 0; b < 256; b++) {
  PLAIN[b] = (b >= 0x20 && b !== 0x7f && b !== 0x5c && !IGNORABLE_LEAD.has(b)) || b === 0x09 || b === 0x0a || b === 0x0d ? 1 : 0;
}

/**
 * The code point a complete UTF-8 sequence (latin1 view, lead byte and
 * continuation bytes already checked) stands for. An overlong form decodes
 * to the code point it spells, so it is dropped too when that is ignorable.
 */
function decodeUtf8(seq: string): number {
  const b0 = seq.charCodeAt(0);
  let cp = seq.length === 2 ? b0 & 0x1f : seq.length === 3 ? b0 & 0x0f : b0 & 0x07;
  for (let k = 1; k < seq.length; k++) cp = (cp << 6) | (seq.charCodeAt(k) & 0x3f);
  return cp;
}

export { DEFAULT_IGNORABLE };

export class Scrubber {
  private readonly patterns: readonly CompiledPattern[];
  private readonly onRedact: ((span: RedactionSpan) => void) | undefined;
  /** Normalised input not yet released (one char per visible byte). */
  private pending = "";
  /** Up to `context` normalised chars just before `pending` (look-behind). */
  private ctx = "";
  /** Absolute normalised offset of pending[0]. */
  private base = 0;
  /** Raw bytes not yet released (latin1), starting at absolute raw offset `rawBase`. */
  private pendingRaw = "";
  private rawBase = 0;
  /** Raw bytes dropped from the view so far (escape sequences, controls). */
  private skipTotal = 0;
  /** A gap is open: bytes were dropped since the last visible byte. */
  private gapOpen = false;
  /** For visible char at absolute normalised index bpIdx[k] and after: raw = norm + bpSkip[k]. */
  private bpIdx: number[] = [];
  private bpSkip: number[] = [];
  /** Skip for pending chars before the first breakpoint. */
  private skipFloor = 0;
  private nState = N_TEXT;
  /** Raw bytes withheld from the view until their sequence is decided (a UTF-8 character, a `\\u`/`\\x` escape). */
  private held = "";
  private heldKind = HELD_UTF8;
  /** Length the withheld sequence has when complete. */
  private heldNeed = 0;
  /** View chars that stand for more than one raw byte (a decoded escape), by absolute normalised index: their raw width. */
  private readonly wide = new Map<number, number>();
  private nLen = 0;
  /** Inside an OSC/DCS/SOS/PM/APC string: its terminator (BEL, ESC \\) separates like a space. */
  private nString = false;
  private readonly triggerMemo = new Map<RegExp, { text: string; from: number; at: number }>();
  private controls = false;
  private readonly context: number;
  private readonly lastEndByKind = new Map<string, number>();
  private redactions = 0;
  private readonly kindSet = new Set<string>();
  private ended = false;
  /** Upper bound on visible bytes ever held back (pending), from the patterns' bounds. */
  readonly holdbackLimit: number;
  /**
   * Bytes of context a window of a longer source needs on each side so its
   * edges cannot cut a secret out of a match (window.ts): a match's length
   * and look-ahead (within the hold-back), a proximity rule's window and its
   * anchor, the look-behind — doubled for the normalised view, whose dropped
   * bytes (escapes, invisible characters) widen the raw span of a match.
   */
  readonly windowContext: number;

  constructor(options: ScrubberOptions = {}) {
    const dlp = options.dlp === undefined ? [] : compileDlpPatterns(options.dlp);
    this.patterns = [...builtinPatterns(), ...dlp];
    this.onRedact = options.onRedact;
    this.context = Math.max(1, ...this.patterns.map((p) => p.bounds.lookbehind));
    // A context rule's match may wait for a format's decision at its secret: add the longest such match.
    const generic = Math.max(0, ...this.patterns.filter((p) => p.generic).map((p) => p.bounds.maxLength));
    this.holdbackLimit = Math.max(...this.patterns.map((p) => p.bounds.maxLength + p.bounds.lookahead + p.triggerLength)) + generic;
    const near = Math.max(0, ...this.patterns.map((p) => p.near?.window ?? 0));
    this.windowContext = 2 * (2 * this.holdbackLimit + near + this.context);
  }

  /** Scrubs the next chunk; returns the bytes that may now leave the host (possibly empty). */
  push(chunk: Uint8Array): Buffer {
    if (this.ended) throw new Error("Scrubber.push after end()");
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (buf.length <= SLICE) return this.process(buf.toString("latin1"), false, false);
    const out: Buffer[] = [];
    for (let off = 0; off < buf.length; off += SLICE) {
      out.push(this.process(buf.subarray(off, Math.min(buf.length, off + SLICE)).toString("latin1"), false, false));
    }
    return Buffer.concat(out);
  }

  /** Releases the held-back tail (scrubbed). The scrubber cannot be used afterwards. */
  end(options: EndOptions = {}): Buffer {
    if (this.ended) return Buffer.alloc(0);
    const out = this.process("", true, options.partial === true);
    this.ended = true;
    this.pending = "";
    this.pendingRaw = "";
    this.ctx = "";
    return out;
  }

  report(): RedactionReport {
    return { count: this.redactions, kinds: [...this.kindSet].sort() };
  }

  /** The input contained terminal control bytes (ESC sequences, other C0 controls but TAB/LF/CR, DEL). */
  get sawTerminalControls(): boolean {
    return this.controls;
  }

  /** Visible bytes currently held back (for tests and metrics). */
  get heldBytes(): number {
    return this.pending.length;
  }

  /**
   * Appends raw input to the pending raw text and returns its normalised
   * view. `final`: no more input follows, so a withheld sequence (a UTF-8
   * character or a `\\u` escape not yet complete) is released as it is.
   */
  // eslint-disable-next-line max-lines-per-function -- one streaming pass over the pending text: escapes, UTF-8 and the withheld tail share the cursor and the offset map
  private normalise(raw: string, final: boolean): string {
    this.pendingRaw += raw;
    if (this.nState === N_TEXT && this.held === "" && !needsSlowPath(raw)) {
      if (this.gapOpen && raw.length > 0) this.breakpoint();
      return raw;
    }
    // Slow path: copy the visible bytes into one buffer (no string slicing per gap).
    const out = Buffer.allocUnsafe(raw.length + this.held.length);
    let n = 0;
    const at = this.base + this.pending.length;
    let skip = this.skipTotal;
    let gap = this.gapOpen;
    const visible = (c: number) => {
      if (gap) {
        // The breakpoint's normalised index is where this byte lands.
        this.bpIdx.push(at + n);
        this.bpSkip.push(skip);
        gap = false;
      }
      out[n++] = c;
    };
    const dropHeld = () => {
      skip += this.held.length;
      gap = true;
      this.held = "";
    };
    const releaseHeld = () => {
      const h = this.held;
      this.held = "";
      for (let k = 0; k < h.length; k++) visible(h.charCodeAt(k));
    };
    for (let i = 0; i < raw.length; i++) {
      const c = raw.charCodeAt(i);
      if (PLAIN[c] === 1 && this.held === "" && this.nState === N_TEXT) {
        // A run of common bytes, copied at once: visible as they are.
        if (gap) {
          this.bpIdx.push(at + n);
          this.bpSkip.push(skip);
          gap = false;
        }
        let j = i + 1;
        while (j < raw.length && PLAIN[raw.charCodeAt(j)] === 1) j++;
        if (j - i > 16) n += out.write(raw.slice(i, j), n, "latin1");
        else for (let k = i; k < j; k++) out[n++] = raw.charCodeAt(k);
        i = j - 1;
        continue;
      }
      if (this.held !== "") {
        // Inside a withheld sequence: decide it, or release it and see this byte afresh.
        if (this.heldKind === HELD_UTF8) {
          if (c >= 0x80 && c <= 0xbf) {
            this.held += raw[i];
            if (this.held.length === this.heldNeed) {
              if (DEFAULT_IGNORABLE.has(decodeUtf8(this.held))) dropHeld();
              else releaseHeld();
            }
            continue;
          }
        } else if (this.held.length === 1) {
          if (c === 0x75 || c === 0x78) {
            this.held += raw[i];
            this.heldNeed = c === 0x75 ? 6 : 4;
            continue;
          }
        } else if (isHex(c)) {
          this.held += raw[i];
          if (this.held.length === this.heldNeed) {
            const cp = parseInt(this.held.slice(2), 16);
            if (DEFAULT_IGNORABLE.has(cp) || (cp < 0x20 && cp !== 0x09 && cp !== 0x0a && cp !== 0x0d) || cp === 0x7f) {
              dropHeld();
            } else if (cp >= 0x20 && cp < 0x7f) {
              // The decoded character stands for the whole escape: a match ending on it redacts all of it.
              const width = this.held.length;
              this.held = "";
              visible(cp);
              this.wide.set(at + n - 1, width);
              skip += width - 1;
              gap = true;
            } else releaseHeld();
          }
          continue;
        }
        releaseHeld();
      }
      let drop: boolean;
      if (this.nState === N_TEXT) {
        if (c >= 0x20 && c !== 0x7f) {
          if (c === 0x5c) {
            this.held = raw[i] as string;
            this.heldKind = HELD_ESCAPE;
            continue;
          }
          if (c >= 0xc0 && IGNORABLE_LEAD.has(c)) {
            this.held = raw[i] as string;
            this.heldKind = HELD_UTF8;
            this.heldNeed = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
            continue;
          }
          drop = false;
        } else if (c === 0x09 || c === 0x0a || c === 0x0d) drop = false;
        else if (c === 0x07 && this.nString) {
          // The string's terminator stays in the view as a separator, so a
          // title's last word is not glued to the text after it.
          this.nString = false;
          this.controls = true;
          drop = false;
        } else {
          drop = true;
          this.controls = true;
          if (c === 0x1b) {
            this.nState = N_ESC;
            this.nLen = 0;
          }
        }
      } else {
        drop = this.escapeByte(c);
        this.controls = true;
      }
      if (drop) {
        skip++;
        gap = true;
      } else visible(c);
    }
    if (final && this.held !== "") releaseHeld();
    this.skipTotal = skip;
    this.gapOpen = gap;
    return out.toString("latin1", 0, n);
  }

  /**
   * One byte inside an escape sequence: returns whether it is dropped. A byte
   * that cannot continue the sequence ends it and is treated as text (the
   * sequence's bytes so far stay dropped). CSI/nF are bounded by MAX_ESCAPE so
   * an unterminated sequence cannot hide the rest of the stream.
   */
  private escapeByte(c: number): boolean {
    if (c < 0x20 && c !== 0x1b) return c !== 0x09 && c !== 0x0a && c !== 0x0d; // C0 inside a sequence: dropped, sequence continues
    if (c === 0x7f) return true;
    this.nLen++;
    if (c === 0x1b) {
      this.nState = N_ESC;
      this.nLen = 0;
      return true;
    }
    if (this.nState === N_ESC) {
      if (c === 0x5c && this.nString) {
        // ST (ESC \\): the backslash stays in the view as a separator.
        this.nString = false;
        this.nState = N_TEXT;
        return false;
      }
      if (c === 0x5d || c === 0x50 || c === 0x58 || c === 0x5e || c === 0x5f) this.nString = true;
      if (c === 0x5b) this.nState = N_CSI;
      else if (c >= 0x20 && c <= 0x2f) this.nState = N_NF;
      else if (c >= 0x30 && c <= 0x7e) this.nState = N_TEXT; // two-byte sequence (incl. OSC/DCS introducers and ST)
      else {
        this.nState = N_TEXT;
        return false;
      }
      return true;
    }
    if (this.nLen > MAX_ESCAPE) {
      this.nState = N_TEXT;
      return false;
    }
    if (this.nState === N_CSI) {
      if (c >= 0x20 && c <= 0x3f) return true;
      this.nState = N_TEXT;
      return c >= 0x40 && c <= 0x7e;
    }
    // nF: intermediates then a final byte.
    if (c >= 0x20 && c <= 0x2f) return true;
    this.nState = N_TEXT;
    return c >= 0x30 && c <= 0x7e;
  }

  private breakpoint(): void {
    this.breakpointAt(this.base + this.pending.length);
  }

  private breakpointAt(idx: number): void {
    this.bpIdx.push(idx);
    this.bpSkip.push(this.skipTotal);
    this.gapOpen = false;
  }

  /** Absolute raw offset of the visible char at absolute normalised index `abs` (or of the end, after any dropped bytes). */
  private rawOf(abs: number, normEnd: number): number {
    if (abs >= normEnd) return abs + this.skipTotal;
    let skip = this.skipFloor;
    const idx = this.bpIdx;
    // Few breakpoints in text; binary search for binary input.
    let lo = 0;
    let hi = idx.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if ((idx[mid] ?? 0) <= abs) {
        skip = this.bpSkip[mid] ?? skip;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return abs + skip;
  }

  private marker(kind: string, raw: string): string {
    return redactionMarker(kind, raw);
  }

  // eslint-disable-next-line max-lines-per-function -- the scrubber's main loop over one chunk (detect, redact, hold back a tail); its steps share the offsets they map
  private process(rawInput: string, final: boolean, partial: boolean): Buffer {
    const input = this.normalise(rawInput, final);
    const text = this.ctx + this.pending + input;
    const off = this.ctx.length;
    const absAt = (i: number) => this.base + (i - off);
    const normEnd = absAt(text.length);
    const rawAt = (i: number) => this.rawOf(absAt(i), normEnd);
    /** Raw offset just past the view char at text index i (a decoded escape covers its whole raw width). */
    const rawEndAt = (i: number) => rawAt(i) + (this.wide.get(absAt(i)) ?? 1);
    const parts: string[] = [];
    let emittedRaw = this.rawBase;
    const rawSlice = (from: number, to: number) => this.pendingRaw.slice(from - this.rawBase, to - this.rawBase);
    let pos = off;
    const cache = new Map<CompiledPattern, Candidate | null>();
    let safeEnd = final ? text.length : this.safeEnd(text, pos, absAt);
    const redact = (matchStart: number, matchEnd: number, start: number, end: number, kind: string, toEnd = false) => {
      const rs = rawAt(start);
      // Dropped bytes right after a match (a colour reset) stay in the output,
      // except when the redaction runs to the end of a cut stream.
      const re = toEnd ? this.rawBase + this.pendingRaw.length : rawEndAt(end - 1);
      parts.push(rawSlice(emittedRaw, rs), this.marker(kind, rawSlice(rs, re)));
      emittedRaw = re;
      this.redactions++;
      this.kindSet.add(kind);
      this.onRedact?.({ kind, matchStart: rawAt(matchStart), matchEnd: Math.max(re, rawEndAt(matchEnd - 1)), start: rs, end: re });
    };

    let partialFrom = -1;
    let partialKind = "";
    for (;;) {
      const m = this.nextMatch(text, pos, cache, absAt);
      if (partial) {
        // At a cut, only a match that ends before the cut is settled; the
        // first credential trigger (or unsettled match) from here on starts
        // a possibly-partial secret that is redacted to the end.
        const t = this.firstTrigger(text, pos);
        const touching = m !== null && m.end + m.pattern.bounds.lookahead >= text.length;
        const tStart = t === null ? Infinity : t.at;
        const mStart = m === null ? Infinity : m.start;
        if (touching || tStart < mStart) {
          if (touching && mStart <= tStart) {
            partialFrom = m.redactStart;
            partialKind = m.pattern.kind;
          } else if (t !== null) {
            partialFrom = t.at;
            partialKind = t.kind;
          }
          break;
        }
      }
      if (!m || m.start >= safeEnd) break;
      let kind = m.pattern.kind;
      if (m.pattern.generic) {
        // Wait until every format's decision at the secret's first byte is final
        // (bounded: the match plus one format's length), then name it by format.
        if (m.redactStart >= safeEnd) {
          safeEnd = m.start;
          break;
        }
        kind = this.formatAt(text, m.redactStart) ?? kind;
      }
      redact(m.start, m.end, m.redactStart, m.redactEnd, kind);
      pos = m.end;
      this.lastEndByKind.set(m.pattern.kind, absAt(m.end));
      // Cached candidates at or after `pos` stay valid (the leftmost match from
      // an earlier position that lies ahead is still the leftmost); only rules
      // that depend on this kind's last match must search again.
      for (const p of this.patterns) if (p.near?.kind === m.pattern.kind) cache.delete(p);
      if (!final) safeEnd = this.safeEnd(text, pos, absAt);
    }
    if (partial && partialFrom < 0) {
      // A proximity rule (an AWS secret right after its key id) has no trigger:
      // at a cut, a trailing run of its alphabet inside the window is its first part.
      for (const p of this.patterns) {
        if (p.near === null) continue;
        const last = this.lastEndByKind.get(p.near.kind);
        if (last === undefined || normEnd - last > p.near.window + p.bounds.maxLength) continue;
        const run = NEAR_TAIL.exec(text.slice(Math.max(pos, text.length - p.bounds.maxLength)));
        if (run !== null) {
          partialFrom = text.length - run[0].length;
          partialKind = p.kind;
          break;
        }
      }
    }
    if (partialFrom >= 0 && partialFrom < text.length) {
      redact(partialFrom, text.length, Math.max(partialFrom, pos), text.length, partialKind, true);
      pos = text.length;
    }

    const commit = Math.max(pos, safeEnd);
    const commitAbs = absAt(commit);
    const commitRaw = final ? this.rawBase + this.pendingRaw.length : Math.max(emittedRaw, this.rawOf(commitAbs, normEnd));
    parts.push(rawSlice(emittedRaw, commitRaw));
    this.pendingRaw = this.pendingRaw.slice(commitRaw - this.rawBase);
    this.rawBase = commitRaw;
    this.base = commitAbs;
    this.pending = text.slice(commit);
    this.ctx = text.slice(Math.max(0, commit - this.context), commit);
    // Breakpoints before the new base are folded into the floor.
    let drop = 0;
    while (drop < this.bpIdx.length && (this.bpIdx[drop] ?? 0) <= commitAbs) drop++;
    if (drop > 0) {
      this.skipFloor = this.bpSkip[drop - 1] ?? this.skipFloor;
      this.bpIdx = this.bpIdx.slice(drop);
      this.bpSkip = this.bpSkip.slice(drop);
    }
    if (commitAbs >= normEnd) this.skipFloor = this.skipTotal;
    for (const k of this.wide.keys()) {
      if (k >= commitAbs) break;
      this.wide.delete(k);
    }
    // The memo refers to this call's text: drop it (no copy of input outlives the call but the pending tail).
    this.triggerMemo.clear();
    return parts.length === 1 ? Buffer.from(parts[0] ?? "", "latin1") : Buffer.from(parts.join(""), "latin1");
  }

  /** The kind of a specific credential format matching exactly at `at`, if any. */
  private formatAt(text: string, at: number): string | null {
    for (const p of this.patterns) {
      if (p.generic || p.near !== null || p.source !== "builtin") continue;
      p.sticky.lastIndex = at;
      if (p.sticky.test(text)) return p.kind;
    }
    return null;
  }

  /** The first full trigger of a credential format at or after pos that lies within that format's reach of the end. */
  private firstTrigger(text: string, pos: number): { at: number; kind: string } | null {
    let best: { at: number; kind: string } | null = null;
    for (const p of this.patterns) {
      if (p.trigger === null) continue;
      const reach = p.bounds.maxLength + p.bounds.lookahead;
      p.trigger.lastIndex = Math.max(pos, text.length - reach);
      const hit = p.trigger.exec(text);
      if (hit && (best === null || hit.index < best.at)) best = { at: hit.index, kind: p.kind };
    }
    return best;
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

  /**
   * The first hit of `trigger` at or after `from` in the current text, or -1.
   * Rules sharing a trigger share one scan: the last answer is reused when
   * `from` lies between where that scan began and the hit it found.
   */
  private triggerHit(trigger: RegExp, text: string, from: number): number {
    const memo = this.triggerMemo.get(trigger);
    if (memo !== undefined && memo.text === text && memo.from <= from && (from <= memo.at || memo.at < 0)) return memo.at;
    trigger.lastIndex = from;
    const hit = trigger.exec(text);
    const at = hit ? hit.index : -1;
    this.triggerMemo.set(trigger, { text, from, at });
    return at;
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
    let m: RegExpExecArray | null;
    if (p.trigger !== null && p.near === null) {
      // Every match starts with a trigger hit. No hit: no match (one cheap scan,
      // shared by rules with the same trigger). A hit: try the pattern there,
      // and if it fails, let the full pattern scan on (V8's own loop is faster
      // than ours when a trigger is frequent, e.g. "Bearer" in prose).
      const at = this.triggerHit(p.trigger, text, pos);
      if (at < 0) return null;
      p.sticky.lastIndex = at;
      m = p.sticky.exec(text);
      if (!m) {
        p.regex.lastIndex = at + 1;
        m = p.regex.exec(text);
      }
    } else {
      p.regex.lastIndex = pos;
      m = p.regex.exec(haystack);
    }
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

/**
 * The text that replaces a redacted span (latin1, one char per byte). UTF-16
 * text (the span's odd bytes all NUL) gets the marker NUL-interleaved too,
 * without its outer NULs, which stay with the bytes around the span.
 */
export function redactionMarker(kind: string, raw: string): string {
  const m = `[REDACTED:${kind}]`;
  if (raw.length >= 3 && raw.length % 2 === 1) {
    let interleaved = true;
    for (let i = 1; i < raw.length; i += 2) {
      if (raw.charCodeAt(i) !== 0) {
        interleaved = false;
        break;
      }
    }
    if (interleaved) return m.split("").join("\0");
  }
  return m;
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
