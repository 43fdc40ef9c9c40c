/**
 * What an awk program text does, read with a tokenizer of awk's lexical
 * grammar (POSIX awk, with gawk's and mawk's extensions that matter here).
 * The one question it answers precisely is the one a pattern cannot: is a
 * `>` an output redirection (`print > "f"`) or a comparison (`$3 > 100`,
 * `NR>1`, `if (a > b)`)? In awk's grammar it is a redirection only in the
 * expression list of a `print`/`printf` statement; everywhere else it
 * compares.
 *
 * Fail closed: whatever the tokenizer cannot read for certain (an
 * unterminated string or regular expression, a `/` inside a bracket
 * expression — where awk implementations disagree on where the regular
 * expression ends —, a character awk has no token for) is `unparsed`, and
 * any `>` in a print statement counts as a redirection even where awk might
 * read a comparison (`print (a > b)`).
 */

export interface AwkFacts {
  /** `system(…)`, a pipe (`print | "cmd"`, `"cmd" | getline`, `|&`). */
  executes: boolean;
  /** Output redirections of print/printf, by target: the string when it is a literal, null otherwise. */
  writes: (string | null)[];
  /** `getline < FILE`: the string when it is a literal, null otherwise. */
  reads: (string | null)[];
  /** `@load`, `@include`, `@namespace`, indirect calls (`@f()`). */
  loads: boolean;
  /** `ARGV`/`ARGC`: the program can change which files it reads. */
  changesInputs: boolean;
  /** `close(…)`: only meaningful with a redirection or a pipe; kept conservative. */
  closes: boolean;
  /** Something the tokenizer could not read for certain. */
  unparsed: boolean;
}

type Kind = "name" | "keyword" | "number" | "string" | "regex" | "op" | "newline" | "at";

interface Token {
  kind: Kind;
  text: string;
  /** For strings: the value after escapes (only what matters here: the literal text). */
  value?: string;
}

const KEYWORDS = new Set([
  "BEGIN", "END", "BEGINFILE", "ENDFILE", "function", "func", "if", "else", "while", "for", "do", "break", "continue", "next", "nextfile",
  "exit", "return", "delete", "in", "getline", "print", "printf", "switch", "case", "default",
]);

/** Multi-character operators, longest first. */
const OPERATORS = ["**=", "|&", "&&", "||", "==", "!=", "<=", ">=", "!~", "++", "--", "+=", "-=", "*=", "/=", "%=", "^=", "**", ">>", ">", "<", "|", "!", "~", "+", "-", "*", "/", "%", "^", "=", "?", ":", ",", ";", "(", ")", "{", "}", "[", "]", "$"];

/** After these a `/` is division (POSIX: ERE only where `/` or `/=` could not appear). */
function endsOperand(t: Token | undefined, closesCondition: boolean): boolean {
  if (!t) return false;
  if (t.kind === "name" || t.kind === "number" || t.kind === "string" || t.kind === "regex") return true;
  if (t.kind === "keyword") return t.text === "getline";
  if (t.kind === "op") return (t.text === ")" && !closesCondition) || t.text === "]" || t.text === "++" || t.text === "--";
  return false;
}

// eslint-disable-next-line max-lines-per-function -- a hand-written lexer: one loop over characters with a branch per token class, read top to bottom
function tokenize(text: string): { tokens: Token[]; unparsed: boolean } {
  const tokens: Token[] = [];
  /** For each open `(`: does it hold the condition of if/while/for/switch? */
  const parens: boolean[] = [];
  let lastClosedCondition = false;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const ch = text[i]!;
    if (ch === " " || ch === "\t" || ch === "\r") {
      i++;
      continue;
    }
    if (ch === "\\" && text[i + 1] === "\n") {
      i += 2;
      continue;
    }
    if (ch === "\\" && text[i + 1] === "\r" && text[i + 2] === "\n") {
      i += 3;
      continue;
    }
    if (ch === "#") {
      while (i < n && text[i] !== "\n") i++;
      continue;
    }
    if (ch === "\n") {
      tokens.push({ kind: "newline", text: "\n" });
      lastClosedCondition = false;
      i++;
      continue;
    }
    if (ch === '"') {
      let j = i + 1;
      let value = "";
      let closed = false;
      while (j < n) {
        const c = text[j]!;
        if (c === "\\") {
          if (j + 1 >= n) break;
          const e = text[j + 1]!;
          value += e === "n" ? "\n" : e === "t" ? "\t" : e === "\n" ? "" : e === '"' || e === "\\" || e === "/" ? e : "\\" + e;
          j += 2;
          continue;
        }
        if (c === "\n") break;
        if (c === '"') {
          closed = true;
          break;
        }
        value += c;
        j++;
      }
      if (!closed) return { tokens, unparsed: true };
      tokens.push({ kind: "string", text: text.slice(i, j + 1), value });
      lastClosedCondition = false;
      i = j + 1;
      continue;
    }
    if (ch === "/" && !endsOperand(tokens[tokens.length - 1], lastClosedCondition)) {
      let j = i + 1;
      let inBracket = false;
      let closed = false;
      while (j < n) {
        const c = text[j]!;
        if (c === "\n") break;
        if (c === "\\") {
          j += 2;
          continue;
        }
        if (inBracket) {
          // awk implementations disagree on whether `/` ends the expression inside `[...]`.
          if (c === "/") return { tokens, unparsed: true };
          if (c === "[" && /[:.=]/.test(text[j + 1] ?? "")) {
            // `[:alpha:]`, `[.x.]`, `[=x=]`: their `]` does not close the bracket expression.
            const close = text.indexOf(text[j + 1]! + "]", j + 2);
            if (close === -1 || text.slice(j, close).includes("/") || text.slice(j, close).includes("\n")) return { tokens, unparsed: true };
            j = close + 2;
            continue;
          }
          if (c === "]") inBracket = false;
          j++;
          continue;
        }
        if (c === "[") {
          inBracket = true;
          j++;
          if (text[j] === "^") j++;
          if (text[j] === "]") j++;
          continue;
        }
        if (c === "/") {
          closed = true;
          break;
        }
        j++;
      }
      if (!closed) return { tokens, unparsed: true };
      tokens.push({ kind: "regex", text: text.slice(i, j + 1) });
      lastClosedCondition = false;
      i = j + 1;
      continue;
    }
    if (/[0-9.]/.test(ch) && (ch !== "." || /[0-9]/.test(text[i + 1] ?? ""))) {
      const m = /^(0[xX][0-9a-fA-F]+|[0-9]*\.?[0-9]*([eE][+-]?[0-9]+)?)/.exec(text.slice(i))!;
      tokens.push({ kind: "number", text: m[0] });
      lastClosedCondition = false;
      i += Math.max(1, m[0].length);
      continue;
    }
    if (/[A-Za-z_]/.test(ch)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)?/.exec(text.slice(i))!;
      tokens.push({ kind: KEYWORDS.has(m[0]) ? "keyword" : "name", text: m[0] });
      lastClosedCondition = false;
      i += m[0].length;
      continue;
    }
    if (ch === "@") {
      tokens.push({ kind: "at", text: "@" });
      lastClosedCondition = false;
      i++;
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (!op) return { tokens, unparsed: true };
    if (op === "(") {
      const prev = tokens[tokens.length - 1];
      parens.push(prev?.kind === "keyword" && ["if", "while", "for", "switch"].includes(prev.text));
      lastClosedCondition = false;
    } else if (op === ")") {
      lastClosedCondition = parens.pop() ?? false;
    } else lastClosedCondition = false;
    tokens.push({ kind: "op", text: op });
    i += op.length;
  }
  return { tokens, unparsed: false };
}

/** Tokens that leave an expression incomplete: a newline after them continues the statement. */
function continues(t: Token | undefined): boolean {
  if (!t) return true;
  if (t.kind === "keyword") return t.text !== "getline" && t.text !== "next" && t.text !== "nextfile" && t.text !== "break" && t.text !== "continue";
  if (t.kind === "op") return ![")", "]", "++", "--"].includes(t.text);
  return false;
}

const SPECIAL_OUTPUTS = new Set(["/dev/stdout", "/dev/stderr"]);

export function awkProgramFacts(text: string): AwkFacts {
  const facts: AwkFacts = { executes: false, writes: [], reads: [], loads: false, changesInputs: false, closes: false, unparsed: false };
  const { tokens, unparsed } = tokenize(text);
  facts.unparsed = unparsed;
  /** Inside a print/printf statement: the brace and paren depth it started at. */
  let print: { braces: number; parens: number } | null = null;
  let braces = 0;
  let parens = 0;
  let getlineAt = -1;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    const prev = tokens[k - 1];
    if (t.kind === "at") facts.loads = true;
    if (t.kind === "name" && t.text === "system") facts.executes = true;
    if (t.kind === "name" && t.text === "close") facts.closes = true;
    if (t.kind === "name" && (t.text === "ARGV" || t.text === "ARGC")) facts.changesInputs = true;
    if (t.kind === "keyword" && (t.text === "print" || t.text === "printf")) print ??= { braces, parens };
    if (t.kind === "keyword" && t.text === "getline") getlineAt = k;
    if (t.kind === "op") {
      if (t.text === "{") braces++;
      else if (t.text === "}") braces--;
      else if (t.text === "(" || t.text === "[") parens++;
      else if (t.text === ")" || t.text === "]") parens--;
      if (t.text === "|" || t.text === "|&") facts.executes = true;
      if ((t.text === ">" || t.text === ">>") && print) {
        // A redirection target runs to the end of the statement; a literal alone is known.
        const target = tokens[k + 1];
        const after = tokens[k + 2];
        const ends = !after || after.kind === "newline" || (after.kind === "op" && (after.text === ";" || after.text === "}"));
        const literal = target?.kind === "string" && ends ? target.value! : null;
        if (literal === null || !SPECIAL_OUTPUTS.has(literal)) facts.writes.push(literal);
      } else if (t.text === ">>") facts.unparsed = true; // not an awk operator outside print
      if (t.text === "<" && getlineAt !== -1) {
        const target = tokens[k + 1];
        facts.reads.push(target?.kind === "string" ? target.value! : null);
      }
    }
    // Statement ends: `;`, `}` back at the print's own level, or a newline that completes it.
    const endsStatement =
      (t.kind === "op" && t.text === ";" && (!print || parens <= print.parens)) ||
      (t.kind === "op" && t.text === "}") ||
      (t.kind === "newline" && !continues(prev));
    if (endsStatement) {
      print = null;
      getlineAt = -1;
    }
  }
  return facts;
}
