/**
 * Comments describe the code as it is and point at the design by its
 * anchors: no tracked source, script, YAML file or folder README cites `DESIGN.md` (the
 * design lives at `docs/design.md#<anchor>`) or narrates the issue a line
 * came from ("issue 12", "(#15)"). A line holding a URL is allowed, so a
 * comment may still cite another project's bug tracker. The top-level
 * README and docs/ are held elsewhere. Offenders are listed as file:line.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { projectPath, projectRoot } from "../../common/paths";

const SOURCES = ["*.ts", "*.tsx", "*.mjs", "*.c", "*.h", "*.cc", "*.md", "*.yml", "*.yaml", "*.sh"];
const EXEMPT = new Set(["README.md", "test/docs/comments.test.ts"]);
const OLD_DESIGN = /DESIGN\.md/;
const ISSUE_NUMBER = /\b[Ii]ssues? #?\d+|\(#\d+\)/;
const URL = /https?:\/\//;

function trackedSources(): string[] {
  const out = execFileSync("git", ["ls-files", "-z", "--", ...SOURCES], { cwd: projectRoot(), encoding: "utf8" });
  return out
    .split("\0")
    .filter((file) => file !== "" && !EXEMPT.has(file) && !file.startsWith("docs/"));
}

function offenders(pattern: RegExp): string[] {
  const found: string[] = [];
  for (const file of trackedSources()) {
    const lines = readFileSync(projectPath(file), "utf8").split("\n");
    lines.forEach((line, i) => {
      if (pattern.test(line) && !URL.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  return found;
}

describe("comments and folder READMEs", () => {
  it("cite the design as docs/design.md#<anchor>, never DESIGN.md", () => {
    expect(offenders(OLD_DESIGN)).toEqual([]);
  });

  it("describe the code as it is, without the issue number it came from", () => {
    expect(offenders(ISSUE_NUMBER)).toEqual([]);
  });
});
