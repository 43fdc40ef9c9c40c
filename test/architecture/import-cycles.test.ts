/**
 * The folders of `server/` depend on each other in one direction: a cycle
 * between two folders means neither can be read, tested or changed without
 * the other, and that the line between them is in the wrong place. This
 * builds the graph of folder-to-folder imports from the source itself
 * (every static `import … from` / `export … from` with a relative
 * specifier, type-only ones included: a type names the folder that owns it)
 * and fails on any two folders that import each other — a cycle of two —
 * not listed below, naming the imports that close it. Longer cycles are not
 * checked: every route handler takes the `HubRuntime` that server/hub
 * assembles from the folders it serves, so most folders reach each other
 * through hub. Test files are left out: a test may reach across
 * to set up what it checks.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { projectPath } from "../../common/paths";

const SERVER = projectPath("server");

/**
 * Pairs that exist and are understood, each as its folders sorted and
 * joined by " ↔ ", with why it is tolerated. A new pair fails; one that
 * disappears fails too, so this list only ever shrinks.
 */
const RUNTIME = "the folder's route handlers take the HubRuntime (server/hub/runtime.ts) that server/hub assembles and mounts them on";
const KNOWN_CYCLES = new Map<string, string>([
  ["admins ↔ passkeys", "passkey sign-in makes an admin session (admins/sessions), and a password reset (admins/admins.ts) removes the admin's passkeys"],
  ["cli ↔ hub", "the CLI starts and reaches the hub (hub/runtime, hub/control-socket), and the control socket writes its answers as the CLI's output type (cli/context.ts CliOutput)"],
  ["health ↔ hub", RUNTIME],
  ["hosts ↔ hub", RUNTIME],
  ["hub ↔ jobs", RUNTIME],
  ["hub ↔ ledger", RUNTIME],
  ["ledger ↔ passkeys", "passkeys seal their registrations in the ledger, and ledger/verify-approvals.ts checks an approval's passkey assertion against its challenge (passkeys/challenge.ts)"],
]);

/** Every source file under `dir`, tests excluded. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) out.push(full);
  }
  return out;
}

/** The server folder a path lies in, or null when it lies outside `server/*\/`. */
function folderOf(file: string): string | null {
  const rel = path.relative(SERVER, file);
  if (rel.startsWith("..") || path.isAbsolute(rel)) return null;
  const parts = rel.split(path.sep);
  return parts.length > 1 ? parts[0]! : null;
}

const SPECIFIER = /(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s+"([^"]+)"|(?:^|\n)\s*import\s+"([^"]+)"/g;

/** folder → folder it imports → the first `file → specifier` that does. */
function folderGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of sourceFiles(SERVER)) {
    const from = folderOf(file);
    if (from === null) continue;
    const edges = graph.get(from) ?? new Map<string, string>();
    graph.set(from, edges);
    for (const match of readFileSync(file, "utf8").matchAll(SPECIFIER)) {
      const specifier = match[1] ?? match[2]!;
      if (!specifier.startsWith(".")) continue;
      const to = folderOf(path.resolve(path.dirname(file), specifier));
      if (to === null || to === from || edges.has(to)) continue;
      edges.set(to, `${path.relative(SERVER, file)} → "${specifier}"`);
    }
  }
  return graph;
}

/** Every pair of folders that import each other, each sorted, as "a ↔ b". */
function mutualPairs(graph: Map<string, Map<string, string>>): string[] {
  const pairs: string[] = [];
  for (const [from, edges] of graph) {
    for (const to of edges.keys()) if (from < to && graph.get(to)?.has(from)) pairs.push(`${from} ↔ ${to}`);
  }
  return pairs.sort();
}

/** The two imports that close a pair, for the failure message. */
function importsOf(graph: Map<string, Map<string, string>>, pair: string): string {
  const [a, b] = pair.split(" ↔ ") as [string, string];
  return `cycle ${pair}:\n  ${a} → ${b}: ${graph.get(a)?.get(b)}\n  ${b} → ${a}: ${graph.get(b)?.get(a)}`;
}

describe("server folder imports", () => {
  const graph = folderGraph();

  it("the graph is read from the source (every server folder with code is in it)", () => {
    expect(graph.size).toBeGreaterThan(10);
    expect(graph.get("actions")?.has("db")).toBe(true);
  });

  it("no two server folders import each other but the known pairs", () => {
    const found = mutualPairs(graph);
    const unknown = found.filter((pair) => !KNOWN_CYCLES.has(pair));
    expect(unknown, unknown.map((pair) => importsOf(graph, pair)).join("\n")).toEqual([]);
    const gone = [...KNOWN_CYCLES.keys()].filter((pair) => !found.includes(pair));
    expect(gone, "a known cycle is gone: remove it from KNOWN_CYCLES").toEqual([]);
  });

  it("actions ↔ hosts and actions ↔ jobs are not among them, known or not", () => {
    const found = mutualPairs(graph);
    expect(found).not.toContain("actions ↔ hosts");
    expect(found).not.toContain("actions ↔ jobs");
    expect(KNOWN_CYCLES.has("actions ↔ hosts")).toBe(false);
  });

  it("the job lifecycle points one way: actions → jobs → hosts, never back", () => {
    expect(graph.get("jobs")?.get("actions"), "server/jobs must not import server/actions").toBeUndefined();
    expect(graph.get("hosts")?.get("jobs"), "server/hosts must not import server/jobs").toBeUndefined();
    expect(graph.get("hosts")?.get("actions"), "server/hosts must not import server/actions").toBeUndefined();
    expect(graph.get("actions")?.has("jobs")).toBe(true);
    expect(graph.get("jobs")?.has("hosts")).toBe(true);
  });

  it("the pair finder finds a pair it is given, and only that", () => {
    const sample = new Map([
      ["a", new Map([["b", "a/x.ts"]])],
      ["b", new Map([["a", "b/x.ts"], ["c", "b/y.ts"]])],
      ["c", new Map<string, string>()],
    ]);
    expect(mutualPairs(sample)).toEqual(["a ↔ b"]);
  });
});
