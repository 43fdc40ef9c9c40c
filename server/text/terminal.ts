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
 * as nothing: variation selectors, Hangul fillers, U+180E), `\p{Co}`
 * (private use: a font decides what it looks like), `\p{Cn}` (unassigned,
 * noncharacters included: no one can say what it will look like),
 * `\p{Zl}` and `\p{Zp}` (line and paragraph separators), `\p{Bidi_Control}`
 * (the reordering characters, named explicitly even though they are also
 * `Cf`), and `\p{Cs}` (a lone surrogate: invalid UTF-16 a renderer may drop).
 * Consequences a reader sees: an emoji ZWJ sequence shows its joiners
 * (`👩\u200d💻`) and an emoji presentation selector shows as `\ufe0f` — a
 * zero-width joiner is exactly what can hide a difference, so it is shown
 * wherever it appears; a character newer than the engine's Unicode tables is
 * unassigned to it and is shown as an escape until the engine learns it.
 *
 * `neutraliseTerminalText` keeps TAB and LF, and CR only as part of CRLF,
 * for multi-line text (output, scripts); `neutraliseOneLine` escapes those
 * too. A literal backslash is left as it is, so text that already contains
 * the four characters `\x1b` reads the same as an escaped ESC: the escape is
 * for reading, not a reversible encoding.
 *
 * Where it lives: server/text is a leaf (no imports), usable by server/cli,
 * by app/ (the browser pages import server/ modules), and, if it ever needs
 * it, by agent-guest (the scrubber, server/trust/scrub, detects controls on its
 * own and the guest reports `structured.sandbox.terminal_controls`; neither
 * imports this, so what the guest loads of server/ does not grow).
 *
 * Every caller goes through `escapeInvisible`: one matcher, one decision of
 * what is escaped; callers choose only which layout characters a multi-line
 * view keeps and the notation (regex escapes, or the approval view's named
 * tokens `⟨ESC⟩` / `⟨U+202E⟩`).
 */

const INVISIBLE_CLASS = String.raw`[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Bidi_Control}\p{Cs}]`;
const INVISIBLE = new RegExp(INVISIBLE_CLASS, "u");
/** CRLF first, so the pair is seen as one match and can be kept whole. */
const INVISIBLE_ALL = new RegExp(String.raw`\r\n|${INVISIBLE_CLASS}`, "gu");

/** Whether one code point is a control, invisible or direction-changing character (TAB and LF included). */
export function isInvisibleCodePoint(codePoint: number): boolean {
  return INVISIBLE.test(String.fromCodePoint(codePoint));
}

/** `\x1b` for U+0000–U+00FF, `\u202e` for the rest of the BMP, `\u{e0041}` beyond it (all valid regex escapes in `u` mode). */
function regexToken(codePoint: number): string {
  if (codePoint <= 0xff) return `\\x${codePoint.toString(16).padStart(2, "0")}`;
  if (codePoint <= 0xffff) return `\\u${codePoint.toString(16).padStart(4, "0")}`;
  return `\\u{${codePoint.toString(16)}}`;
}

/** Short names the approval view uses for the controls a person knows by name; every other code point is `U+XXXX`. */
const CONTROL_NAMES: Readonly<Record<number, string>> = { 0x00: "NUL", 0x07: "BEL", 0x08: "BS", 0x09: "TAB", 0x0a: "LF", 0x0b: "VT", 0x0c: "FF", 0x0d: "CR", 0x1b: "ESC", 0x7f: "DEL" };

/** `⟨ESC⟩`, `⟨U+202E⟩`, `⟨U+E0041⟩`. */
function namedToken(codePoint: number): string {
  return `⟨${CONTROL_NAMES[codePoint] ?? `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`}⟩`;
}

/**
 * The named notation's own brackets: escaped when they are in the text, so
 * every `⟨` on screen starts an escape and every `⟦ … ⟧` is a span the hub
 * marked (server/approvals/view.ts).
 */
const NOTATION_BRACKETS = new Set([0x27e8, 0x27e6, 0x27e7]);

export interface EscapeOptions {
  /**
   * What a multi-line view keeps as layout: `none` (one line: TAB, LF and CR
   * escaped too), `lf` (LF kept; TAB and every CR escaped), `layout` (TAB, LF
   * and CRLF kept; a bare CR, which can overwrite a line, escaped).
   */
  keep?: "none" | "lf" | "layout";
  /** `regex` (default): `\x1b`, `\u202e`, `\u{e0041}`; `named`: `⟨ESC⟩`, `⟨U+202E⟩`, with `⟨ ⟦ ⟧` escaped too. */
  notation?: "regex" | "named";
}

function kept(match: string, keep: NonNullable<EscapeOptions["keep"]>): boolean {
  if (keep === "none") return false;
  if (keep === "lf") return match === "\n";
  return match === "\r\n" || match === "\n" || match === "\t";
}

const INVISIBLE_OR_BRACKET_ALL = new RegExp(String.raw`\r\n|${INVISIBLE_CLASS}|[\u27e6\u27e7\u27e8]`, "gu");

/**
 * THE escaping function: every control, invisible, direction-changing,
 * private-use or unassigned character (the property set above) becomes a
 * visible token, except the layout `keep` names; `controls` says whether
 * anything was escaped. Every channel that shows caller text to a person
 * calls this (or one of the wrappers below).
 */
export function escapeInvisible(text: string, options: EscapeOptions = {}): NeutralisedText {
  const keep = options.keep ?? "none";
  const named = options.notation === "named";
  let controls = false;
  const out = text.replace(named ? INVISIBLE_OR_BRACKET_ALL : INVISIBLE_ALL, (match) => {
    if (kept(match, keep)) return match;
    const codePoint = match.codePointAt(0) ?? 0;
    // A bracket of the notation is not an invisible character: escaped for the notation's sake only.
    if (!NOTATION_BRACKETS.has(codePoint)) controls = true;
    const token = named ? namedToken : regexToken;
    if (match === "\r\n") return `${token(0x0d)}${keep === "lf" ? "\n" : token(0x0a)}`;
    return token(codePoint);
  });
  return { text: out, controls };
}

export interface NeutralisedText {
  text: string;
  /** The input contained at least one character that was escaped. */
  controls: boolean;
}

/** Multi-line text: escapes every control, invisible and bidi character except TAB, LF and CRLF; `controls` says whether there were any. */
export function neutraliseTerminalText(text: string): NeutralisedText {
  return escapeInvisible(text, { keep: "layout" });
}

/** Text shown on one line (a pattern, a name, a table cell): TAB, LF and CR are escaped too. */
export function neutraliseOneLine(text: string): NeutralisedText {
  return escapeInvisible(text, { keep: "none" });
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
    if (kept(match[0], "layout")) continue;
    const start = match.index ?? 0;
    spans.push({ start, end: start + match[0].length, codePoint: match[0].codePointAt(0) ?? 0 });
  }
  return spans;
}

/**
 * The code points `neutraliseOneLine` would escape, named for a refusal
 * message: `U+200B at 2, U+202E at 5` (positions in code points, from 1),
 * at most `max` of them and a count of the rest.
 */
export function describeInvisibleCharacters(text: string, max = 8): string {
  const found: string[] = [];
  let position = 0;
  let more = 0;
  for (const ch of text) {
    position += 1;
    const codePoint = ch.codePointAt(0) ?? 0;
    if (!isInvisibleCodePoint(codePoint)) continue;
    if (found.length < max) found.push(`U+${codePoint.toString(16).toUpperCase().padStart(4, "0")} at ${position}`);
    else more += 1;
  }
  return more === 0 ? found.join(", ") : `${found.join(", ")} and ${more} more`;
}

/**
 * A line for the hub's own log (stderr): error messages can carry
 * client-supplied text (a tool argument, a host name, a receiver's answer),
 * and a log is read in a terminal or a log viewer — the same one-line
 * escape, so an ESC, a bidi override or a newline cannot forge or hide a line.
 */
export function logLine(text: string): string {
  return neutraliseOneLine(text).text;
}
