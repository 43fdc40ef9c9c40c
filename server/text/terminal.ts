/**
 * Neutralising terminal control sequences and invisible characters in text
 * shown to a person.
 *
 * Action output, a command line, a grant pattern, an environment value or a
 * stdin preview are written by an agent or a workload; printed raw to a
 * terminal, ESC sequences can write the clipboard (OSC 52), retitle the
 * window, move the cursor to overwrite what was shown, or hide text, and a
 * carriage return can make a line read as something else. In a browser the
 * same text can lie without any terminal: a right-to-left override makes
 * `ftm<U+202E>exe.sh` read as `ftmhs.exe`, a zero-width space makes `r<U+200B>m`
 * read as `rm` while a pattern for `rm` does not match it, and tag characters
 * (U+E0000 block) carry text no one sees. Every channel that shows such text
 * to a person passes it through `neutraliseTerminalText` (or, for text shown
 * on one line, `neutraliseOneLine`), which replaces each such character with
 * a visible escape (`\x1b`, `\x07`, `\u202e`, `\u200b`, `\u{e0041}`) and says
 * whether there were any. The escapes are also regular-expression syntax, so
 * an escaped grant pattern still means what it meant.
 *
 * What is escaped is defined by Unicode properties, not by a list, so a
 * character added to a category in a later Unicode version is covered by the
 * engine's tables: `\p{Cc}` (C0, DEL, C1 — U+009B is a one-character CSI for
 * some terminals), `\p{Cf}` (format: zero-width, bidi embeddings and
 * isolates, tags, soft hyphen), `\p{Default_Ignorable_Code_Point}` (rendered
 * as nothing: variation selectors, Hangul fillers, U+180E), `\p{Zl}` and
 * `\p{Zp}` (line and paragraph separators), `\p{Bidi_Control}` (the
 * reordering characters, named explicitly even though they are also `Cf`),
 * and `\p{Cs}` (a lone surrogate: invalid UTF-16 a renderer may drop).
 *
 * `neutraliseTerminalText` keeps TAB and LF, and CR only as part of CRLF,
 * for multi-line text (output, scripts); `neutraliseOneLine` escapes those
 * too. A literal backslash is left as it is, so text that already contains
 * the four characters `\x1b` reads the same as an escaped ESC: the escape is
 * for reading, not a reversible encoding.
 *
 * Where it lives: server/text is a leaf (no imports), usable by server/cli,
 * by app/ (the browser pages import server/ modules), and, if it ever needs
 * it, by agent-guest (the guest's scrubber detects controls on its own and
 * reports `structured.sandbox.terminal_controls`; it does not import this,
 * so the guest's server/ imports do not grow).
 */

const INVISIBLE_CLASS = String.raw`[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Bidi_Control}\p{Cs}]`;
const INVISIBLE = new RegExp(INVISIBLE_CLASS, "u");
/** CRLF first, so the pair is seen as one match and can be kept whole. */
const INVISIBLE_ALL = new RegExp(String.raw`\r\n|${INVISIBLE_CLASS}`, "gu");

/** Whether one code point is a control, invisible or direction-changing character (TAB and LF included). */
export function isInvisibleCodePoint(codePoint: number): boolean {
  return INVISIBLE.test(String.fromCodePoint(codePoint));
}

/** `\x1b` for U+0000–U+00FF, `\u202e` for the rest of the BMP, `\u{e0041}` beyond it (all valid regex escapes in `u` mode). */
function visible(ch: string): string {
  const c = ch.codePointAt(0) ?? 0;
  if (c <= 0xff) return `\\x${c.toString(16).padStart(2, "0")}`;
  if (c <= 0xffff) return `\\u${c.toString(16).padStart(4, "0")}`;
  return `\\u{${c.toString(16)}}`;
}

/** Kept as layout in multi-line text; any other match is escaped. */
function keptInMultiLine(match: string): boolean {
  return match === "\r\n" || match === "\n" || match === "\t";
}

export interface NeutralisedText {
  text: string;
  /** The input contained at least one character that was escaped. */
  controls: boolean;
}

function neutralise(text: string, keep: (match: string) => boolean): NeutralisedText {
  let controls = false;
  const out = text.replace(INVISIBLE_ALL, (match) => {
    if (keep(match)) return match;
    controls = true;
    return match === "\r\n" ? "\\x0d\\x0a" : visible(match);
  });
  return { text: out, controls };
}

/** Multi-line text: escapes every control, invisible and bidi character except TAB, LF and CRLF; `controls` says whether there were any. */
export function neutraliseTerminalText(text: string): NeutralisedText {
  return neutralise(text, keptInMultiLine);
}

/** Text shown on one line (a pattern, a name, a table cell): TAB, LF and CR are escaped too. */
export function neutraliseOneLine(text: string): NeutralisedText {
  return neutralise(text, () => false);
}

/** Bytes (e.g. action output) decoded as UTF-8 — invalid sequences become U+FFFD — then neutralised. */
export function neutraliseTerminalBytes(bytes: Uint8Array): NeutralisedText {
  return neutraliseTerminalText(new TextDecoder("utf-8", { fatal: false }).decode(bytes));
}

/** Whether the text holds anything `neutraliseTerminalText` would escape (TAB, LF and CRLF do not count). */
export function hasTerminalControls(text: string): boolean {
  return neutraliseTerminalText(text).controls;
}

/** Whether the text holds anything `neutraliseOneLine` would escape (TAB and LF count). */
export function hasInvisibleCharacters(text: string): boolean {
  return INVISIBLE.test(text);
}

/**
 * Where `neutraliseTerminalText` would escape something: string indices
 * (UTF-16 code units, end exclusive) and the code point, for pointing a
 * person at the spot.
 */
export function invisibleCharacterSpans(text: string): Array<{ start: number; end: number; codePoint: number }> {
  const spans: Array<{ start: number; end: number; codePoint: number }> = [];
  for (const match of text.matchAll(INVISIBLE_ALL)) {
    if (keptInMultiLine(match[0])) continue;
    const start = match.index ?? 0;
    spans.push({ start, end: start + match[0].length, codePoint: match[0].codePointAt(0) ?? 0 });
  }
  return spans;
}
