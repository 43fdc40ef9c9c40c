/**
 * The folder maps a newcomer reads first must be complete and true: the
 * README's map of top-level folders and server/README.md's map of
 * `server/*`. A folder added without a line in its map, or a line left for a
 * folder that is gone, fails here and names the folder. "A folder" is one
 * git tracks (dot-folders, node_modules and build output are not part of
 * the house). The design's error-code table is held to the codes the code
 * defines in the same way.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { projectPath, projectRoot } from "../../common/paths";
import { ERROR_CODES } from "../../server/trust/error-codes";

/** Never part of a map even if something under them were tracked. */
const NOT_MAPPED = new Set(["node_modules", "dist", "build", "bench-results", "test-results", "playwright-report"]);

/**
 * The first Markdown table after `marker` (a line that contains it): every
 * backticked `name/` in each row's first cell. Throws when the marker or the
 * table is missing, so a renamed heading cannot turn into an empty map.
 */
function folderMapOf(markdown: string, marker: string, source: string): string[] {
  const lines = markdown.split("\n");
  const at = lines.findIndex((line) => line.includes(marker));
  if (at < 0) throw new Error(`${source}: no line containing ${JSON.stringify(marker)} (the folder map's anchor)`);
  let i = at + 1;
  while (i < lines.length && !lines[i]!.startsWith("|")) i++;
  if (i >= lines.length) throw new Error(`${source}: no table after ${JSON.stringify(marker)}`);
  const names: string[] = [];
  for (; i < lines.length && lines[i]!.startsWith("|"); i++) {
    const firstCell = lines[i]!.split("|")[1] ?? "";
    for (const match of firstCell.matchAll(/`([^`/]+)\/`/g)) names.push(match[1]!);
  }
  return names;
}

/** What is wrong with a map against the folders that exist, one sentence per folder. */
function mapProblems(mapped: readonly string[], actual: ReadonlySet<string>, what: string): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const name of mapped) {
    if (seen.has(name)) problems.push(`${what} lists \`${name}/\` twice`);
    seen.add(name);
    if (!actual.has(name)) problems.push(`${what} names \`${name}/\`, which is not a folder git tracks`);
  }
  for (const name of [...actual].sort()) {
    if (!seen.has(name)) problems.push(`${what} is missing \`${name}/\``);
  }
  return problems;
}

function trackedFiles(): string[] {
  const out = execFileSync("git", ["ls-files", "-z"], { cwd: projectRoot(), encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return out.split("\0").filter((file) => file !== "");
}

/** Folders at `depth` (0: top level; 1: inside the one top-level folder `under`) that hold a tracked file. */
function trackedFolders(files: readonly string[], under?: string): Set<string> {
  const folders = new Set<string>();
  for (const file of files) {
    const parts = file.split("/");
    const [name, rest] = under === undefined ? [parts[0], parts.length > 1] : [parts[1], parts[0] === under && parts.length > 2];
    if (!rest || name === undefined) continue;
    if (name.startsWith(".") || NOT_MAPPED.has(name)) continue;
    folders.add(name);
  }
  return folders;
}

const readme = (file: string) => readFileSync(projectPath(file), "utf8");

describe("folder maps", () => {
  const files = trackedFiles();

  it("README.md maps every top-level folder git tracks, and only those", () => {
    const mapped = folderMapOf(readme("README.md"), '<a id="folder-map"></a>', "README.md");
    expect(mapProblems(mapped, trackedFolders(files), "README.md's folder map")).toEqual([]);
  });

  it("server/README.md maps every folder under server/, and only those", () => {
    const mapped = folderMapOf(readme("server/README.md"), "## Folders", "server/README.md");
    expect(mapProblems(mapped, trackedFolders(files, "server"), "server/README.md's folder map")).toEqual([]);
  });

  it("every top-level folder has a README saying what it owns", () => {
    const missing = [...trackedFolders(files)].filter((name) => !existsSync(projectPath(name, "README.md")));
    expect(missing.map((name) => `${name}/ has no README.md`)).toEqual([]);
  });

  it("docs/design.md's error-code table lists exactly the codes server/trust defines", () => {
    const design = readme("docs/design.md");
    const start = design.indexOf('<a id="errors"></a>');
    expect(start, "docs/design.md has no errors anchor").toBeGreaterThanOrEqual(0);
    const end = design.indexOf("<a id=", start + 1);
    const rows = design.slice(start, end < 0 ? undefined : end).split("\n").filter((line) => line.startsWith("| `"));
    const documented = rows.map((line) => /^\| `([A-Z_]+)`/.exec(line)?.[1]).filter((code): code is string => code !== undefined);
    const defined = Object.keys(ERROR_CODES);
    expect({
      undocumented: defined.filter((code) => !documented.includes(code)),
      not_defined: documented.filter((code) => !defined.includes(code)),
    }).toEqual({ undocumented: [], not_defined: [] });
  });
});

describe("the map check itself", () => {
  const map = ["# x", '<a id="folder-map"></a>', "", "| folder | owns |", "|---|---|", "| `app/` | a |", "| `bin/`, `tools/` | b |", "", "| `late/` | not this table |"].join("\n");

  it("reads every backticked folder of the first cells of the table after the marker, and nothing after it", () => {
    expect(folderMapOf(map, '<a id="folder-map"></a>', "fixture")).toEqual(["app", "bin", "tools"]);
  });

  it("names a folder missing from the map, one the map names that does not exist, and one listed twice", () => {
    expect(mapProblems(["app", "bin", "gone", "bin"], new Set(["app", "bin", "server"]), "the map")).toEqual([
      "the map names `gone/`, which is not a folder git tracks",
      "the map lists `bin/` twice",
      "the map is missing `server/`",
    ]);
  });

  it("refuses a document whose marker or table is gone instead of reading an empty map", () => {
    expect(() => folderMapOf("# no map here\n", '<a id="folder-map"></a>', "fixture")).toThrow(/no line containing/);
    expect(() => folderMapOf('<a id="folder-map"></a>\ntext only\n', '<a id="folder-map"></a>', "fixture")).toThrow(/no table after/);
  });

  it("counts tracked folders, leaving out dot-folders, build output and files at the top", () => {
    const files = ["README.md", ".ci/run", "app/page.tsx", "server/a/b.ts", "server/c.ts", "node_modules/x/y.js", "dist/z.mjs"];
    expect([...trackedFolders(files)].sort()).toEqual(["app", "server"]);
    expect([...trackedFolders(files, "server")]).toEqual(["a"]);
  });
});
