import { spawnSync } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { assessShellRiskSync, initShellRisk } from "./assess";
import { CORPUS } from "./corpus";
import { parseShell } from "./parser";

/**
 * Differential check of the parser against bash itself: for every corpus
 * text, whether tree-sitter-bash reports an error or missing node (which the
 * assessor turns into `parse.error`, high) must agree with `bash -n`.
 *
 * Expected disagreements are grammar gaps, each with its reason. This list
 * may only shrink: a new disagreement fails the test, and so does an entry
 * that no longer disagrees (remove it).
 */
const EXPECTED_DISAGREEMENTS: ReadonlyMap<string, string> = new Map([
  ["cat <> file", "tree-sitter-bash does not parse the `<>` (read-write) redirection; bash accepts it. The assessor rates it parse.error (high): stricter, never laxer"],
  ["exec 3<>/dev/tcp/example.com/80", "`<>` again (tree-sitter-bash grammar gap); rated high by parse.error and network.dev-tcp is not needed for that"],
  ["{rm,-rf,/}", "brace expansion in command position is not in tree-sitter-bash's grammar; bash accepts it. Rated parse.error (high)"],
]);

/** `bash -n` over many texts with one driver process: NUL-separated on stdin, one digit per text on stdout (1 = syntax error). */
function bashSyntaxErrors(texts: readonly string[]): boolean[] {
  const driver = `while IFS= read -r -d '' t; do if bash -n -c "$t" 2>/dev/null; then printf 0; else printf 1; fi; done`;
  const out: boolean[] = [];
  const BATCH = 200;
  for (let i = 0; i < texts.length; i += BATCH) {
    const batch = texts.slice(i, i + BATCH);
    const r = spawnSync("bash", ["--norc", "--noprofile", "-c", driver], { input: batch.join("\0") + "\0", encoding: "utf8", env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", LANG: "C" } as unknown as NodeJS.ProcessEnv });
    if (r.status !== 0 || r.stdout.length !== batch.length) throw new Error(`bash -n driver failed: status ${r.status}, ${r.stdout.length}/${batch.length} answers, ${r.stderr}`);
    for (const ch of r.stdout) out.push(ch === "1");
  }
  return out;
}

function treeSitterError(text: string): boolean {
  const tree = parseShell(text);
  try {
    return tree.rootNode.hasError;
  } finally {
    tree.delete();
  }
}

beforeAll(async () => {
  await initShellRisk();
});

describe("tree-sitter-bash agrees with bash -n on every corpus text", () => {
  it("the error state of each corpus text matches bash -n, except the listed grammar gaps", () => {
    // A NUL byte cannot be passed to bash in an argument; the assessor flags it by itself.
    const texts = [...new Set(CORPUS.map((c) => c.text))].filter((t) => !t.includes("\0"));
    const bash = bashSyntaxErrors(texts);
    const disagreements: { text: string; treeSitter: boolean; bash: boolean }[] = [];
    texts.forEach((text, i) => {
      const ts = treeSitterError(text);
      if (ts !== bash[i]) disagreements.push({ text, treeSitter: ts, bash: bash[i]! });
    });
    console.log(`bash -n differential: ${texts.length} corpus texts, ${texts.length - disagreements.length} agree, ${disagreements.length} expected disagreements`);
    expect(disagreements.map((d) => d.text).sort()).toEqual([...EXPECTED_DISAGREEMENTS.keys()].sort());
    // Every accepted disagreement is in the safe direction: the assessor sees an error bash does not, so the verdict is high.
    for (const d of disagreements) {
      expect(d).toMatchObject({ treeSitter: true, bash: false });
      expect(assessShellRiskSync(d.text).level).toMatch(/^(high|critical)$/);
    }
  });

  it("a text bash rejects is high with parse.error", () => {
    const texts = ["echo \"oops", "if true; then", "(ls"];
    expect(bashSyntaxErrors(texts)).toEqual([true, true, true]);
    for (const text of texts) {
      const verdict = assessShellRiskSync(text);
      expect(verdict.level).toBe("high");
      expect(verdict.reasons.map((r) => r.rule)).toContain("parse.error");
    }
  });
});
