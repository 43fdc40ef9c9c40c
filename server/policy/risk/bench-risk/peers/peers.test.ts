import { beforeAll, describe, expect, it } from "vitest";
import { initShellParser } from "../../parser";
import { claudeCodeAllows } from "./claude-code";
import { codexAllows } from "./codex";
import { geminiAllows } from "./gemini";

/*
 * Each model against the behaviour its source states (Codex's and Gemini
 * CLI's own test cases and comments; Claude Code's changelog entries), so a
 * bench figure rests on a model that does what its header claims.
 */

beforeAll(async () => {
  await initShellParser();
});

describe("Codex model", () => {
  it.each([
    "ls && pwd; echo 'hi there' | wc -l",
    "git -C . branch --show-current",
    "git branch",
    "sed -n 1,5p file.txt",
    "nl -nrz Cargo.toml",
    "find . -name file.txt",
    "rg Cargo.toml -n",
    "numfmt 1000",
    "echo \"/usr\"'/'\"local\"/bin",
  ])("allows %s", (text) => {
    expect(codexAllows(text)).toBe(true);
  });

  it.each([
    "ls > out.txt",
    "echo hi & echo bye",
    "(ls)",
    "echo $(pwd)",
    "echo `pwd`",
    "echo $HOME",
    "echo \"hi $USER\"",
    "FOO=bar ls",
    "git branch -d feature",
    "git branch new-branch",
    "git checkout status",
    "git -c core.pager=cat log -n 1",
    "git log --output=/tmp/x -n 1",
    "git fetch",
    "sed -n xp file.txt",
    "find . -name file.txt -exec rm {} ;",
    "base64 -ob64.txt",
    "rg --pre=pwned files",
    "rg -z files",
    "cargo check",
    "ls &&",
  ])("holds %s", (text) => {
    expect(codexAllows(text)).toBe(false);
  });
});

describe("Gemini CLI model", () => {
  it.each(["ls -la", "git status", "git log --oneline -5", "cat README.md", "/usr/bin/rg foo", "echo $HOME", "sed -n 10p f"])("allows %s", (text) => {
    expect(geminiAllows(text)).toBe(true);
  });

  it.each([
    // Sub-commands are re-checked with the heuristics off, so any second command is asked.
    "ls | wc -l",
    "ls && pwd",
    "echo $(date)",
    "cat <<'EOF'\nx\nEOF",
    // rg only from a trusted absolute path.
    "rg foo",
    "cat a > b",
    "grep x f 2>/dev/null",
    "git -c core.pager=cat log",
    "git branch -d x",
    "find . -delete",
    "bash -c 'ls'",
    "ls &&",
  ])("holds %s", (text) => {
    expect(geminiAllows(text)).toBe(false);
  });
});

describe("Claude Code model (documented rules only)", () => {
  it.each([
    "ls *.ts",
    "cd src && ls",
    "LANG=C ls",
    "awk '{print $1}' access.log",
    "cut -d / -f 2 paths.txt",
    "grep -rn TODO src 2>/dev/null",
    "git diff --stat | grep src",
    "file dist/app",
    "fd -e ts",
    "lsof -i :3000",
    "seq 1 10",
  ])("allows %s", (text) => {
    expect(claudeCodeAllows(text)).toBe(true);
  });

  it.each([
    "cd /etc && ls",
    "cd .. && ls",
    "FOO=1 ls",
    "file -m magic x",
    "file --files-from list.txt",
    "grep -f /etc/patterns x",
    "cat README.md",
    "echo $(date)",
    "ls > out.txt",
    "awk '$3 > 1' f",
    "git log --output=x",
    "git push",
    "fd -x rm",
    "ls &&",
  ])("holds %s", (text) => {
    expect(claudeCodeAllows(text)).toBe(false);
  });
});
