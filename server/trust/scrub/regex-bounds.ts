/**
 * Static analysis of a regular expression in a small, byte-oriented subset of
 * JavaScript syntax: how short and how long a match can be, how far past a
 * match the engine may look, and a rough backtracking budget.
 *
 * Why: the streaming scrubber holds back a tail of the output so a secret
 * split across two chunks is still seen whole. That is only sound when every
 * pattern has a known maximum match length (and a known look-ahead), so a
 * pattern we cannot bound is refused rather than run with a guess. The same
 * analysis refuses patterns that match the empty string (they would redact
 * between every byte) and shapes that backtrack exponentially.
 *
 * The subset is deliberately narrow. Refused everywhere: `*`, `+`, `{n,}`
 * (unbounded), `^` and `$` (an anchor at the end of a chunk is not the end of
 * the stream), back-references, `\u`/`\p`/`\c` escapes and non-ASCII literals
 * (the scrubber matches bytes as latin1 characters; write `\xNN`). Refused
 * for operator-supplied (DLP) patterns but allowed in the built-in ones we
 * audit here: look-around, named groups and nested quantifiers.
 */

export interface RegexBounds {
  /** Fewest characters (bytes) a match can consume. */
  minLength: number;
  /** Most characters (bytes) a match can consume. */
  maxLength: number;
  /** Characters the engine may read after the end of a match (look-ahead, `\b`). */
  lookahead: number;
  /** Characters the engine may read before the start of a match (look-behind, `\b`). */
  lookbehind: number;
  /** Product of quantifier ranges and alternation widths — a crude backtracking budget. */
  cost: number;
}

export interface AnalyzeOptions {
  /** Built-in patterns: allow look-around, named groups, nested quantifiers; skip the cost budget. */
  trusted: boolean;
  /** Largest `{n,m}` upper bound accepted. */
  maxRepeat: number;
}

export class RegexRefused extends Error {
  constructor(
    readonly reason: string,
    readonly at: number,
  ) {
    super(`${reason} (at offset ${at})`);
    this.name = "RegexRefused";
  }
}

interface Node {
  min: number;
  max: number;
  cost: number;
  hasQuantifier: boolean;
  zeroWidth: boolean;
}

const COST_CAP = 1e15;
const mulCap = (a: number, b: number) => Math.min(COST_CAP, a * b);

const CLASS_ESCAPES = new Set(["d", "D", "w", "W", "s", "S"]);
const CONTROL_ESCAPES = new Set(["t", "n", "r", "f", "v", "0"]);
// Escaped punctuation that means the literal character in every regex mode.
const SYNTAX_CHARS = new Set([..."\\^$.*+?()[]{}|/-"]);

function isPrintableAscii(ch: string): boolean {
  const c = ch.charCodeAt(0);
  return c >= 0x20 && c < 0x7f;
}

// eslint-disable-next-line max-lines-per-function -- a recursive-descent reader of one regex: the branches share the cursor and the bounds being summed
export function analyzeRegex(source: string, options: AnalyzeOptions): RegexBounds {
  let i = 0;
  let lookahead = 0;
  let lookbehind = 0;
  const refuse = (reason: string, at = i): never => {
    throw new RegexRefused(reason, at);
  };

  const parseAlternation = (): Node => {
    const branches: Node[] = [parseSequence()];
    while (source[i] === "|") {
      i++;
      branches.push(parseSequence());
    }
    return {
      min: Math.min(...branches.map((b) => b.min)),
      max: Math.max(...branches.map((b) => b.max)),
      cost: Math.min(COST_CAP, branches.reduce((s, b) => s + b.cost, 0)),
      hasQuantifier: branches.some((b) => b.hasQuantifier),
      zeroWidth: branches.every((b) => b.zeroWidth),
    };
  };

  const parseSequence = (): Node => {
    const node: Node = { min: 0, max: 0, cost: 1, hasQuantifier: false, zeroWidth: true };
    while (i < source.length && source[i] !== "|" && source[i] !== ")") {
      const start = i;
      let atom = parseAtom();
      atom = parseQuantifier(atom, start);
      node.min += atom.min;
      node.max += atom.max;
      node.cost = mulCap(node.cost, atom.cost);
      node.hasQuantifier ||= atom.hasQuantifier;
      node.zeroWidth &&= atom.zeroWidth;
    }
    return node;
  };

  const single = (): Node => ({ min: 1, max: 1, cost: 1, hasQuantifier: false, zeroWidth: false });
  const zero = (): Node => ({ min: 0, max: 0, cost: 1, hasQuantifier: false, zeroWidth: true });

  const parseAtom = (): Node => {
    const ch = source[i];
    if (ch === undefined) return refuse("unexpected end of pattern");
    if (ch === "(") return parseGroup();
    if (ch === "[") return parseClass();
    if (ch === "\\") return parseEscape(false);
    if (ch === ".") {
      i++;
      return single();
    }
    if (ch === "^" || ch === "$") {
      return refuse("anchors ^ and $ are refused: a chunk boundary is not the end of the stream");
    }
    if (ch === "*" || ch === "+") return refuse("unbounded quantifiers (* +) are refused; use {n,m}");
    if (ch === "?" || ch === "{") return refuse("quantifier with nothing to repeat (escape a literal { as \\{)");
    if (ch === "]" || ch === "}") return refuse(`unescaped '${ch}'; write \\${ch}`);
    if (!isPrintableAscii(ch)) return refuse("only printable ASCII literals are accepted; write other bytes as \\xNN");
    i++;
    return single();
  };

  const parseGroup = (): Node => {
    const open = i;
    i++; // (
    let kind: "capture" | "noncapture" | "ahead" | "behind" = "capture";
    if (source[i] === "?") {
      const next = source.slice(i, i + 4);
      if (next.startsWith("?:")) {
        kind = "noncapture";
        i += 2;
      } else if (next.startsWith("?=") || next.startsWith("?!")) {
        if (!options.trusted) refuse("look-ahead is refused in DLP patterns");
        kind = "ahead";
        i += 2;
      } else if (next.startsWith("?<=") || next.startsWith("?<!")) {
        if (!options.trusted) refuse("look-behind is refused in DLP patterns");
        kind = "behind";
        i += 3;
      } else if (next.startsWith("?<")) {
        if (!options.trusted) refuse("named groups are refused in DLP patterns");
        const close = source.indexOf(">", i);
        if (close < 0 || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(source.slice(i + 2, close))) refuse("malformed group name");
        i = close + 1;
      } else {
        refuse("unsupported group syntax");
      }
    }
    const inner = parseAlternation();
    if (source[i] !== ")") refuse("unclosed group", open);
    i++;
    if (kind === "ahead") {
      lookahead += inner.max;
      return zero();
    }
    if (kind === "behind") {
      lookbehind += inner.max;
      return zero();
    }
    return inner;
  };

  const parseClass = (): Node => {
    const open = i;
    i++; // [
    if (source[i] === "^") i++;
    let members = 0;
    while (i < source.length && source[i] !== "]") {
      const ch = source[i] ?? "";
      if (ch === "\\") {
        parseEscape(true);
      } else if (ch === "[") {
        refuse("unescaped '[' inside a class");
      } else if (!isPrintableAscii(ch)) {
        refuse("only printable ASCII literals are accepted in a class; write other bytes as \\xNN");
      } else {
        i++;
      }
      members++;
    }
    if (source[i] !== "]") refuse("unclosed character class", open);
    if (members === 0) refuse("empty character class never matches", open);
    i++;
    return single();
  };

  const parseEscape = (inClass: boolean): Node => {
    const at = i;
    i++; // backslash
    const e = source[i];
    if (e === undefined) return refuse("trailing backslash", at);
    i++;
    if (CLASS_ESCAPES.has(e) || CONTROL_ESCAPES.has(e)) {
      if (e === "0" && /[0-9]/.test(source[i] ?? "")) refuse("octal escapes are refused; write \\xNN", at);
      return single();
    }
    if (e === "b" || e === "B") {
      if (inClass) refuse("\\b inside a class is ambiguous; write \\x08", at);
      lookahead = Math.max(lookahead, 1);
      lookbehind = Math.max(lookbehind, 1);
      return zero();
    }
    if (e === "x") {
      if (!/^[0-9A-Fa-f]{2}$/.test(source.slice(i, i + 2))) refuse("\\x needs two hex digits", at);
      i += 2;
      return single();
    }
    if (/[1-9]/.test(e) || e === "k") return refuse("back-references are refused", at);
    if (e === "u" || e === "p" || e === "P" || e === "c") return refuse(`\\${e} escapes are refused (byte-oriented matching; write \\xNN)`, at);
    if (SYNTAX_CHARS.has(e)) return single();
    return refuse(`unknown escape \\${e}`, at);
  };

  const parseQuantifier = (atom: Node, atomStart: number): Node => {
    const ch = source[i];
    let lo: number;
    let hi: number;
    if (ch === "?") {
      lo = 0;
      hi = 1;
      i++;
    } else if (ch === "*" || ch === "+") {
      return refuse("unbounded quantifiers (* +) are refused; use {n,m}");
    } else if (ch === "{") {
      const m = /^\{(\d{1,6})(?:(,)(\d{0,6}))?\}/.exec(source.slice(i));
      if (!m) return refuse("malformed {n,m} quantifier (escape a literal { as \\{)");
      lo = Number(m[1]);
      if (m[2] === undefined) hi = lo;
      else if (m[3] === "") return refuse("unbounded quantifier {n,} is refused; use {n,m}");
      else hi = Number(m[3]);
      if (hi < lo) return refuse("quantifier {n,m} with m < n");
      if (hi > options.maxRepeat) return refuse(`quantifier upper bound ${hi} exceeds ${options.maxRepeat}`);
      i += m[0].length;
    } else {
      return atom;
    }
    if (source[i] === "?") i++; // lazy: same bounds
    if (atom.zeroWidth) return refuse("quantifier on a zero-width assertion", atomStart);
    if (atom.hasQuantifier && !options.trusted) {
      return refuse("nested quantifiers are refused (catastrophic backtracking)", atomStart);
    }
    let cost = mulCap(atom.cost === 1 ? 1 : Math.min(COST_CAP, atom.cost ** Math.min(hi, 64)), hi - lo + 1);
    if (!Number.isFinite(cost)) cost = COST_CAP;
    return { min: atom.min * lo, max: atom.max * hi, cost, hasQuantifier: hi !== lo || lo > 1 || atom.hasQuantifier, zeroWidth: false };
  };

  const root = parseAlternation();
  if (i !== source.length) refuse("unbalanced ')'");
  return { minLength: root.min, maxLength: root.max, lookahead, lookbehind, cost: root.cost };
}
