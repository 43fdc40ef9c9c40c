/**
 * Neutralising terminal control sequences in text shown to a person (issue 12).
 *
 * Action output, a command line, an environment value or a stdin preview are
 * written by an agent or a workload; printed raw to a terminal, ESC sequences
 * can write the clipboard (OSC 52), retitle the window, move the cursor to
 * overwrite what was shown, or hide text, and a carriage return can make a
 * line read as something else. Every channel that shows such text to a person
 * (the CLI now, the browser later) passes it through `neutraliseTerminalText`,
 * which replaces each control character with a visible escape (`\x1b`,
 * `\x07`, `\u009b`, `\u202e`) and says whether there were any.
 *
 * Kept: TAB and LF, and CR only as part of CRLF. Escaped: every other C0
 * control (U+0000–U+001F, ESC included), DEL, C1 controls (U+0080–U+009F:
 * U+009B is a one-character CSI for some terminals), and the Unicode
 * bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069), which
 * reorder what is displayed. A literal backslash is left as it is, so text
 * that already contains the four characters `\x1b` reads the same as an
 * escaped ESC: the escape is for reading, not a reversible encoding.
 *
 * Where it lives: server/text is a leaf (no imports), usable by server/cli,
 * by app/ (the browser console already imports server/ modules), and, if it
 * ever needs it, by agent-guest (the guest's scrubber detects controls on its
 * own and reports `structured.sandbox.terminal_controls`; it does not import
 * this, so the guest's server/ imports do not grow).
 */

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROLS = /\r(?!\n)|[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

function visible(ch: string): string {
  const c = ch.charCodeAt(0);
  return c <= 0xff ? `\\x${c.toString(16).padStart(2, "0")}` : `\\u${c.toString(16).padStart(4, "0")}`;
}

export interface NeutralisedText {
  text: string;
  /** The input contained at least one control character that was escaped. */
  controls: boolean;
}

/** Escapes control characters visibly; `controls` says whether there were any. */
export function neutraliseTerminalText(text: string): NeutralisedText {
  let controls = false;
  const out = text.replace(CONTROLS, (ch) => {
    controls = true;
    return visible(ch);
  });
  return { text: out, controls };
}

/** Bytes (e.g. action output) decoded as UTF-8 — invalid sequences become U+FFFD — then neutralised. */
export function neutraliseTerminalBytes(bytes: Uint8Array): NeutralisedText {
  return neutraliseTerminalText(new TextDecoder("utf-8", { fatal: false }).decode(bytes));
}

/** Whether the text holds anything `neutraliseTerminalText` would escape. */
export function hasTerminalControls(text: string): boolean {
  CONTROLS.lastIndex = 0;
  const found = CONTROLS.test(text);
  CONTROLS.lastIndex = 0;
  return found;
}
