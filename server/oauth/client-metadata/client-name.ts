/**
 * Client names: what the consent page shows as "Authorize <name>", the one
 * line an admin decides on. A name is taken in its NFKC form (fullwidth,
 * ligature and other compatibility spellings folded into the characters
 * they stand for), and refused when it holds anything that is not shown as
 * itself: format characters (zero-width joiners, bidirectional controls),
 * default-ignorable code points (variation selectors, fillers), controls,
 * line or paragraph separators, lone surrogates. All by Unicode property, so
 * a character added in a later Unicode version is judged by its property,
 * not by whether someone remembered to list it.
 */

export const MAX_CLIENT_NAME_LENGTH = 200;

const HIDDEN = /[\p{Cf}\p{Default_Ignorable_Code_Point}\p{Cc}\p{Zl}\p{Zp}\p{Cs}]/u;

export type ClientNameCheck = { ok: true; name: string } | { ok: false; reason: string };

/** A client name as sent → the name to store (NFKC, trimmed), or why not. */
export function checkClientName(sent: string): ClientNameCheck {
  const name = sent.normalize("NFKC").trim();
  if (name.length === 0) return { ok: false, reason: "client_name is empty" };
  if (name.length > MAX_CLIENT_NAME_LENGTH) return { ok: false, reason: `client_name is longer than ${MAX_CLIENT_NAME_LENGTH} characters` };
  const hidden = HIDDEN.exec(name);
  if (hidden !== null) {
    const code = (hidden[0].codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0");
    return { ok: false, reason: `client_name contains U+${code}, a control, format, invisible or line-break character` };
  }
  return { ok: true, name };
}

/**
 * Scripts a name's letters are sorted into (by Script_Extensions, as UTS #39
 * does). Han is shared by the Japanese, Korean and Chinese-with-Bopomofo
 * writing systems, so those count as one script each (UTS #39 §5.1
 * "augmented script sets"): 日本語のテキスト is not mixed, Pаypal is.
 */
const SCRIPTS: readonly { test: RegExp; sets: readonly string[] }[] = [
  ...["Latin", "Greek", "Cyrillic", "Armenian", "Hebrew", "Arabic", "Syriac", "Thaana", "Nko", "Devanagari", "Bengali", "Gurmukhi", "Gujarati", "Oriya", "Tamil", "Telugu", "Kannada", "Malayalam", "Sinhala", "Thai", "Lao", "Tibetan", "Myanmar", "Georgian", "Ethiopic", "Cherokee", "Canadian_Aboriginal", "Ogham", "Runic", "Khmer", "Mongolian", "Tifinagh", "Vai", "Coptic", "Gothic", "Deseret"].map((script) => ({
    test: new RegExp(`\\p{Script_Extensions=${script}}`, "u"),
    sets: [script],
  })),
  { test: /\p{Script_Extensions=Han}/u, sets: ["Han", "Japanese", "Korean", "Bopomofo"] },
  { test: /\p{Script_Extensions=Hiragana}/u, sets: ["Japanese"] },
  { test: /\p{Script_Extensions=Katakana}/u, sets: ["Japanese"] },
  { test: /\p{Script_Extensions=Hangul}/u, sets: ["Korean"] },
  { test: /\p{Script_Extensions=Bopomofo}/u, sets: ["Bopomofo"] },
];

const SHARED = /[\p{Script_Extensions=Common}\p{Script_Extensions=Inherited}]/u;

/** The scripts one character may belong to; null for characters every script uses (digits, spaces, punctuation, combining marks). */
function scriptsOf(ch: string): Set<string> | null {
  if (SHARED.test(ch)) return null;
  const sets = new Set<string>();
  for (const script of SCRIPTS) if (script.test.test(ch)) for (const set of script.sets) sets.add(set);
  // A script not listed above is still a script: it mixes with each listed one (two unlisted ones are not told apart).
  if (sets.size === 0) sets.add("other");
  return sets;
}

/** True when no one script (augmented, UTS #39) covers every letter of `name`. */
export function mixesScripts(name: string): boolean {
  let common: readonly string[] | null = null;
  for (const ch of name) {
    const sets = scriptsOf(ch);
    if (sets === null) continue;
    const narrowed: readonly string[] = common === null ? [...sets] : common.filter((s) => sets.has(s));
    if (narrowed.length === 0) return true;
    common = narrowed;
  }
  return false;
}

/**
 * What the consent page must say about a name before an admin trusts it:
 * letters from more than one script (a Cyrillic а inside a Latin word), or
 * a name that was sent in another form than the one shown (its NFKC form
 * differs). `sent` is the client_name as the client sent it, when known.
 */
export function nameWarnings(name: string, sent: string | null): string[] {
  const warnings: string[] = [];
  if (mixesScripts(name)) warnings.push("This name mixes letters of different scripts (for example Latin with Cyrillic or Greek), so it may imitate another client's name.");
  if (sent !== null && sent.trim() !== name) warnings.push(`The client sent its name as ${JSON.stringify(sent)}; it is shown in its Unicode NFKC form, so it may imitate another client's name.`);
  return warnings;
}
