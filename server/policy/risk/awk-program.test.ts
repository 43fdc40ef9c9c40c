import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { awkProgramFacts, type AwkFacts } from "./awk-program";

/**
 * The awk tokenizer against the awk installed here: every program it finds
 * quiet (no redirection, pipe, system(), getline <, @load, ARGV, close, and
 * nothing it could not read) must neither create a file nor run a program
 * when awk itself runs it. `acts` pins what awk does, so a row whose payload
 * never fires fails too; `said` pins what the tokenizer says. Every target is
 * relative: the rows run in a scratch directory.
 */

type Said = "quiet" | "writes" | "executes" | "reads" | "unparsed" | "inputs";

interface Row {
  program: string;
  said: Said;
  /** Whether awk creates a file or runs a program; null where awk implementations differ. */
  acts: boolean | null;
  why: string;
}

const ROWS: Row[] = [
  { program: "$1 > 5", said: "quiet", acts: false, why: "a pattern comparison" },
  { program: "NR>1 {print}", said: "quiet", acts: false, why: "comparison without spaces" },
  { program: "{ if ($1 > 5) print $2 }", said: "quiet", acts: false, why: "comparison in an if condition" },
  { program: "BEGIN { x = 1 > 0; print x }", said: "quiet", acts: false, why: "comparison in an assignment" },
  { program: "$1 >= 3 && $2 != \"b\"", said: "quiet", acts: false, why: ">= and &&" },
  { program: "{ n = $1 / 2; print n }", said: "quiet", acts: false, why: "division after a field" },
  { program: "BEGIN { a = 4; b = 2; print a /b/ 1 }", said: "quiet", acts: false, why: "`/b/` after an operand is two divisions" },
  { program: "/a|b/ { print }", said: "quiet", acts: false, why: "alternation inside a regular expression" },
  { program: "$2 == \"a\" || $1 > 5", said: "quiet", acts: false, why: "|| is not a pipe" },
  { program: "{ print $1 > \"/dev/stderr\" }", said: "quiet", acts: false, why: "/dev/stderr is printing" },
  { program: "$0 ~ /\"/ { n++ } END { print n } # \"", said: "quiet", acts: false, why: "a quote inside a regular expression and a comment" },
  { program: "{ print $1 > \"out_a\" }", said: "writes", acts: true, why: "print redirection" },
  { program: "{ print $1, $2 >> \"out_b\" }", said: "writes", acts: true, why: "append redirection" },
  { program: "{ print length > 10 }", said: "writes", acts: true, why: "in print, `> 10` is a file named 10" },
  { program: "BEGIN { printf \"%d\\n\", 3 > 2 }", said: "writes", acts: true, why: "in printf, `> 2` is a file named 2" },
  { program: "{ printf(\"%s\\n\", $2) > \"out_c\" }", said: "writes", acts: true, why: "printf with parentheses, then a redirection" },
  { program: "{ print $1,\n  $2 > \"out_d\" }", said: "writes", acts: true, why: "a print continued after a comma and a newline" },
  { program: "NR == 1 { if (1) /\"/; print > \"out_e\" } # \"", said: "writes", acts: null, why: "a regular expression after if (…) holding a quote that would hide the redirection if read as division (gawk runs it; mawk reads division there, a syntax error)" },
  { program: "{ print > \"out\" \"_f\" }", said: "writes", acts: true, why: "a concatenated target is not a literal" },
  { program: "BEGIN { system(\"m_system\") }", said: "executes", acts: true, why: "system()" },
  { program: "BEGIN { print \"x\" | \"m_pipe\" }", said: "executes", acts: true, why: "print into a pipe" },
  { program: "BEGIN { \"m_getline\" | getline x }", said: "executes", acts: true, why: "a command piped into getline" },
  { program: "BEGIN { while ((getline line < \"data\") > 0) n++; print n }", said: "reads", acts: false, why: "getline from a named file" },
  { program: "BEGIN { ARGV[1] = \"data\"; ARGC = 2 } { print }", said: "inputs", acts: false, why: "ARGV names the files awk reads" },
  { program: "$0 ~ /[/]/", said: "unparsed", acts: false, why: "a slash in a bracket expression" },
  { program: "{ x = $1 & 3 }", said: "unparsed", acts: false, why: "a character awk has no token for" },
];

function said(facts: AwkFacts): Said {
  if (facts.unparsed) return "unparsed";
  if (facts.executes) return "executes";
  if (facts.writes.length) return "writes";
  if (facts.reads.length) return "reads";
  if (facts.changesInputs) return "inputs";
  if (facts.loads || facts.closes) return "executes";
  return "quiet";
}

const AWK = ["/usr/bin/awk", "/usr/bin/mawk", "/usr/bin/gawk"].find((p) => spawnSync(p, ["BEGIN{}"]).status === 0) ?? null;
let root = "";
let markers = "";

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "awk-diff-"));
  markers = join(root, "bin");
  mkdirSync(markers);
  for (const name of ["m_system", "m_pipe", "m_getline"]) {
    const path = join(markers, name);
    writeFileSync(path, `#!/bin/sh\ntouch "${join(root, "ran")}-${name}"\n`);
    chmodSync(path, 0o755);
  }
});

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("awk tokenizer", () => {
  it.each(ROWS.map((r) => [r.why, r] as const))("%s", (_why, row) => {
    expect(said(awkProgramFacts(row.program))).toBe(row.said);
  });
});

describe.skipIf(AWK === null)(`awk tokenizer against ${AWK ?? "awk (none installed)"}`, () => {
  it.each(ROWS.map((r, i) => [r.why, r, i] as const))("%s", (_why, row, i) => {
    const work = join(root, `w${i}`);
    mkdirSync(work);
    writeFileSync(join(work, "data"), "7 a\n3 b\n");
    const run = spawnSync(AWK!, [row.program, "data"], { cwd: work, env: { PATH: `${markers}:/usr/bin:/bin`, LC_ALL: "C" } as unknown as NodeJS.ProcessEnv, timeout: 5000, encoding: "utf8" });
    expect(run.error).toBeUndefined();
    const created = readdirSync(work).filter((f) => f !== "data");
    const ran = readdirSync(root).filter((f) => f.startsWith("ran-"));
    for (const f of ran) rmSync(join(root, f));
    const acts = created.length > 0 || ran.length > 0;
    if (row.acts !== null) expect({ acts, created, ran }).toMatchObject({ acts: row.acts });
    if (row.said === "quiet") expect(acts).toBe(false);
  });
});
