/**
 * `text.invisible-characters`: the action's text holds characters a person
 * cannot see as themselves — controls, zero-width and other default-ignorable
 * code points, bidi overrides and isolates (server/text decides which, by
 * Unicode property). `r<U+200B>m` reads as `rm`; `ftm<U+202E>exe.sh` reads as
 * `ftmhs.exe`; an approval card escapes them, but a verdict of `read_only`
 * would let such a command run with no person at all. So each one is a reason
 * of at least `low`: never auto-allowed, always shown to whoever decides.
 *
 * Looks at the shell text or code (each character gets a span, so the card
 * marks it), the environment's names and values, stdin, and the working
 * directory. The text's own meaning is assessed elsewhere; this only says a
 * person could be misled about it.
 */
import { invisibleCharacterSpans } from "../../text";
import type { RiskReason, RiskSpan } from "./types";

export const INVISIBLE_CHARACTERS_RULE = "text.invisible-characters";
/** Spans named per text; beyond this one more reason says how many were left out. */
const MAX_SPANS_PER_TEXT = 20;

const NO_SPAN: RiskSpan = { start: 0, end: 0, line: 1, column: 1 };

function codePointName(codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`;
}

function spanAt(text: string, start: number, end: number): RiskSpan {
  const before = text.slice(0, start);
  const lineStart = before.lastIndexOf("\n") + 1;
  return { start, end, line: before.split("\n").length, column: start - lineStart + 1 };
}

function reason(message: string, span: RiskSpan = NO_SPAN): RiskReason {
  return { level: "low", rule: INVISIBLE_CHARACTERS_RULE, message, span };
}

/** One reason per invisible character of the subject (command or code), pointing at it. */
function subjectReasons(name: string, text: string): RiskReason[] {
  const spans = invisibleCharacterSpans(text);
  const reasons = spans
    .slice(0, MAX_SPANS_PER_TEXT)
    .map((s) => reason(`the ${name} holds ${codePointName(s.codePoint)}, an invisible, control or direction-changing character: what is displayed may not be what runs`, spanAt(text, s.start, s.end)));
  if (spans.length > MAX_SPANS_PER_TEXT) reasons.push(reason(`the ${name} holds ${spans.length - MAX_SPANS_PER_TEXT} more invisible, control or direction-changing characters`));
  return reasons;
}

/** One reason for a text that is not the subject (env, stdin, cwd), naming the characters found. */
function fieldReason(what: string, text: string): RiskReason[] {
  const spans = invisibleCharacterSpans(text);
  if (spans.length === 0) return [];
  const names = [...new Set(spans.map((s) => codePointName(s.codePoint)))].slice(0, 8).join(", ");
  return [reason(`${what} holds invisible, control or direction-changing characters (${names}): what is displayed may not be what the command receives`)];
}

/** The `text.invisible-characters` reasons of a prepared action (none when its text is all visible). */
export function invisibleCharacterReasons(prepared: Record<string, unknown>): RiskReason[] {
  const reasons: RiskReason[] = [];
  for (const name of ["command", "code"] as const) {
    const text = prepared[name];
    if (typeof text === "string") reasons.push(...subjectReasons(name, text));
  }
  const env = prepared["env"];
  if (env !== null && typeof env === "object" && !Array.isArray(env)) {
    for (const [key, value] of Object.entries(env as Record<string, unknown>)) {
      reasons.push(...fieldReason(`environment variable ${JSON.stringify(key)}`, `${key}=${typeof value === "string" ? value : JSON.stringify(value) ?? ""}`));
    }
  }
  for (const name of ["stdin", "cwd"] as const) {
    const text = prepared[name];
    if (typeof text === "string") reasons.push(...fieldReason(name, text));
  }
  return reasons;
}
