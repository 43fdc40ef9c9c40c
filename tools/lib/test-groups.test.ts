import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import config from "../../vitest.config";
import { ALONE_FILES, aloneFiles, fileIsolationNeed, hasSerialMarker, IN_PROCESS_SUPPORT, isolationNeed, ISOLATION_NEEDS, markedSerialFiles, serialGlobs, sharedFiles, SERIAL_FOLDERS, SERIAL_WORKERS, TEST_EXCLUDE } from "./test-groups.mjs";

const ROOT = path.resolve(import.meta.dirname, "../..");

describe("vitest's serial group (tools/lib/test-groups.mjs)", () => {
  it("the marker counts only in a comment near the top of a file", () => {
    expect(hasSerialMarker("/**\n * Launches sandboxes.\n * test-group: serial — loop devices\n */\nimport x from 'y';")).toBe(true);
    expect(hasSerialMarker("// test-group: serial (cgroups)\nimport x from 'y';")).toBe(true);
    expect(hasSerialMarker("const s = 'test-group: serial';")).toBe(false);
    expect(hasSerialMarker(`${"// filler\n".repeat(60)}// test-group: serial\n`)).toBe(false);
  });

  it("a marked file outside the serial folders joins the group; an unmarked one and one inside a serial folder are not listed twice", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "lh-groups-"));
    try {
      const write = (rel: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
        fs.writeFileSync(path.join(root, rel), text);
      };
      write("server/a/guest.test.ts", "// test-group: serial — starts a guest\n");
      write("server/a/pure.test.ts", "import x from 'y';\n");
      write("native/test/launch.test.ts", "// test-group: serial\n");
      write("node_modules/pkg/server/x.test.ts", "// test-group: serial\n");
      expect(markedSerialFiles(root)).toEqual(["server/a/guest.test.ts"]);
      expect(serialGlobs(root)).toEqual([...SERIAL_FOLDERS.map((f) => `${f}**/*.test.ts`), "server/a/guest.test.ts"]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it("in this checkout every marked file exists and says why (text after the marker)", () => {
    for (const rel of markedSerialFiles(ROOT)) {
      const head = fs.readFileSync(path.join(ROOT, rel), "utf8").split("\n", 40).join("\n");
      expect(head, rel).toMatch(/test-group: serial\b\s*\S+/);
    }
  });
});

describe("vitest's shared group: files that start nothing share a process (tools/lib/test-groups.mjs)", () => {
  const head = 'import { describe, expect, it } from "vitest";\nimport { parse } from "./parse";\n';
  const STARTS = "imports a test support module that starts hubs, guests or clusters";

  it("a file of pure checks, or one using only in-process support (seeded randomness, its own databases, the pipeline's fixtures), may share a process", () => {
    expect(isolationNeed(`${head}describe("parse", () => { it("reads", () => expect(parse("a")).toBe("a")); });\n`)).toBeUndefined();
    expect(isolationNeed(`${head}import { seeded } from "../../test/support/random";\n`)).toBeUndefined();
    expect(isolationNeed(`${head}import { describeEachDatabase } from "../../test/support/databases";\nconst db = await openTestDatabase(kind);\n`)).toBeUndefined();
    expect(isolationNeed(`${head}import { PGlite } from "@electric-sql/pglite";\n`)).toBeUndefined();
    // A relative import resolves against the file's own path: test/pipeline's support is in-process, test/mcp's starts hubs.
    expect(isolationNeed(`${head}import { testDeps } from "./support";\n`, "test/pipeline/cli.test.ts")).toBeUndefined();
    expect(isolationNeed(`${head}import { describeEachDatabase } from "../support/databases";\n`, "test/limits/edge-limits.test.ts")).toBeUndefined();
    expect(IN_PROCESS_SUPPORT).not.toContain("test/support/hub-process");
    // Words in a test's name or a string are not code that starts something.
    expect(isolationNeed(`${head}it("the hub refuses a forked header", () => expect(parse("x")).toBe("x"));\n`)).toBeUndefined();
  });

  it("hostile: each way a file starts something or changes process-wide state keeps it out, with the reason", () => {
    const cases: Array<[string, string]> = [
      ['import { spawnSync } from "node:child_process";', "starts child processes"],
      ["const r = execFileSync(bin, []);", "starts child processes"],
      ['import { startHub } from "../support/hub-process";', STARTS],
      // Without the file's path a relative `./support` cannot be told from test/mcp's: it keeps the file out.
      ['import { insertToken } from "./support";', STARTS],
      ['import { waitFor } from "../guest/support.ts";', STARTS],
      ['import { launch } from "../../native/launch";', "imports the sandbox or the guest"],
      ['import { Worker } from "node:worker_threads";', "starts threads"],
      ['import { ESLint } from "eslint";', "runs ESLint, whose type-aware program stays in its module caches for the rest of the process"],
      ['vi.mock("./clock");', "mocks modules or globals, which vitest resets only with the process"],
      ["vi.useFakeTimers();", "mocks modules or globals, which vitest resets only with the process"],
      ['vi.spyOn(console, "error");', "mocks modules or globals, which vitest resets only with the process"],
      ["vi.resetModules();", "mocks modules or globals, which vitest resets only with the process"],
      ['process.env.LEASEHOLD_PORT = "1";', "changes the process environment"],
      ['process.env["TZ"] ??= "UTC";', "changes the process environment"],
      ["delete process.env.HOME;", "changes the process environment"],
      ['process.chdir("/tmp");', "changes process-wide state"],
      ['process.on("unhandledRejection", () => {});', "changes process-wide state"],
      ["process.exitCode = 1;", "changes process-wide state"],
      ["globalThis.fetch = fake;", "sets globals"],
    ];
    for (const [line, why] of cases) expect(isolationNeed(`${head}${line}\n`), line).toBe(why);
    expect(isolationNeed(`${head}import { rpc } from "./support";\n`, "test/mcp/tokens.test.ts")).toBe(STARTS);
    expect(isolationNeed(`// test-group: isolated — holds a file lock the next file would see\n${head}`)).toBe("marked test-group: isolated");
    // Reading the environment is no change to it.
    expect(isolationNeed(`${head}const port = process.env.E2E_PORT ?? "1"; if (process.env.CI === "1") {}\n`)).toBeUndefined();
    expect(ISOLATION_NEEDS.length).toBeGreaterThan(0);
  });

  it("hostile: a file that hands its work to a helper under test/ or tools/ needs what the helper needs, however deep", () => {
    // mcp-hub-pglite.test.ts holds one line, a call of ./hub-suite, which starts hubs through test/support/hub-process.
    expect(fileIsolationNeed(ROOT, "test/mcp/mcp-hub-pglite.test.ts")).toMatch(/\(test\/mcp\/hub-suite\.ts\)$/);
    // durability.test.ts starts a PostgreSQL server of its own through tools/lib/postgres.mjs.
    expect(fileIsolationNeed(ROOT, "server/db/durability.test.ts")).toBe("starts child processes (tools/lib/postgres.mjs)");
    expect(fileIsolationNeed(ROOT, "server/trpc/routers/grants.test.ts")).toBeUndefined();
  });

  it("in this checkout: the three groups split every test file once; the files that start hubs, databases and guests are not shared", () => {
    const shared = sharedFiles(ROOT);
    const serial = new Set(markedSerialFiles(ROOT));
    const all = ["server", "common", "tools", "test", "native", "agent-guest"].flatMap((top) =>
      fs.readdirSync(path.join(ROOT, top), { recursive: true, encoding: "utf8" }).map((rel) => `${top}/${rel.split(path.sep).join("/")}`),
    ).filter((rel) => rel.endsWith(".test.ts") && !rel.includes("/node_modules/"));
    for (const rel of shared) {
      expect(all, rel).toContain(rel);
      expect(serial.has(rel) || SERIAL_FOLDERS.some((f) => rel.startsWith(f)), rel).toBe(false);
      expect(fileIsolationNeed(ROOT, rel), rel).toBeUndefined();
    }
    for (const rel of ["test/hub/start.test.ts", "test/mcp/session-cap-pglite.test.ts", "test/mcp/mcp-actions-pglite.test.ts", "server/db/durability.test.ts", "tools/build.test.ts", "test/hub/dies-with-parent.test.ts", "server/trust/leasehold-error.test.ts"]) {
      expect(shared, rel).not.toContain(rel);
    }
    // Enough to be worth a group: the pure checks of the hub's trust, ledger and policy code, and the files that open their own databases.
    expect(shared).toEqual(expect.arrayContaining(["server/trust/scrub/window.test.ts", "server/ledger/tree.test.ts", "server/policy/risk/corpus.test.ts", "server/trpc/routers/grants.test.ts", "test/pipeline/cli.test.ts"]));
  });

  it("vitest.config.ts runs the shared files without isolation, under the guard, and leaves them out of the parallel group", () => {
    type Project = { test?: { name?: string; include?: string[]; exclude?: string[]; isolate?: boolean; setupFiles?: string[]; maxWorkers?: number; sequence?: { groupOrder?: number } } };
    const projects = (config as { test?: { projects?: Project[] } }).test?.projects ?? [];
    const byName = new Map(projects.map((p) => [p.test?.name, p.test]));
    const shared = byName.get("shared");
    const parallel = byName.get("parallel");
    expect(shared?.include).toEqual(sharedFiles(ROOT));
    expect(shared?.exclude).toEqual(TEST_EXCLUDE);
    expect(shared?.isolate).toBe(false);
    expect(shared?.setupFiles).toEqual(["tools/lib/shared-guard.mjs", "tools/lib/cpu-probe.mjs"]);
    // Side by side with "parallel": vitest runs projects of one groupOrder together only when their maxWorkers agree.
    expect(shared?.sequence?.groupOrder).toBe(parallel?.sequence?.groupOrder);
    expect(shared?.maxWorkers).toBe(parallel?.maxWorkers);
    expect(parallel?.exclude).toEqual(expect.arrayContaining(sharedFiles(ROOT)));
    expect(parallel?.isolate).toBeUndefined();
    expect(byName.get("serial")?.isolate).toBeUndefined();
  });
});

describe("vitest's alone group: serial files that cannot run beside the browser tests (tools/lib/test-groups.mjs)", () => {
  type Project = { test?: { name?: string; include?: string[]; exclude?: string[]; maxWorkers?: number; sequence?: { groupOrder?: number } } };
  const byName = new Map(((config as { test?: { projects?: Project[] } }).test?.projects ?? []).map((p) => [p.test?.name, p.test]));

  it("each listed file exists, is serial (by folder or marker) and says why", () => {
    const marked = new Set(markedSerialFiles(ROOT));
    expect(ALONE_FILES.length).toBeGreaterThan(0);
    for (const { file, why } of ALONE_FILES) {
      expect(fs.existsSync(path.join(ROOT, file)), file).toBe(true);
      expect(marked.has(file) || SERIAL_FOLDERS.some((f) => file.startsWith(f)), file).toBe(true);
      expect(why.length, file).toBeGreaterThan(20);
    }
  });

  it("vitest.config.ts runs them one at a time after the serial group, and the serial group leaves them out", () => {
    const serial = byName.get("serial");
    const alone = byName.get("alone");
    expect(alone?.include).toEqual(aloneFiles());
    expect(alone?.maxWorkers).toBe(1);
    expect(serial?.maxWorkers).toBe(SERIAL_WORKERS);
    expect(serial?.exclude).toEqual(expect.arrayContaining(aloneFiles()));
    expect(alone?.sequence?.groupOrder).toBeGreaterThan(serial?.sequence?.groupOrder ?? Infinity);
  });
});
