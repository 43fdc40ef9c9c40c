// Interpreters in a lease import nothing from the workspace unless asked:
// modules one job plants in the workspace (`this.py`, `json.py`, `Foo.pm`)
// must not run inside a later job's `python3 -m this`, `-m json.tool`, `-c`
// or `perl -e 'require Foo'`, and the variables that make interpreters load
// code are not in the workload's environment, whatever the launching
// process has in its own.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, type SandboxPolicyInput } from "../index";
const SANDBOX_DEFAULT_ENV = { HOME: "/tmp", LANG: "C.UTF-8", PYTHONSAFEPATH: "1", PYTHONDONTWRITEBYTECODE: "1" };
import { basePolicy, makeWorkdir, removeWorkdir, setupNative } from "./helpers";

const PYTHON = "/usr/bin/python3";
const PERL = "/usr/bin/perl";
// PYTHONSAFEPATH exists from Python 3.11: probe the host's own interpreter.
const pythonVersion = existsSync(PYTHON) ? spawnSync(PYTHON, ["-c", "import sys; print(sys.version_info[0] * 100 + sys.version_info[1])"], { encoding: "utf8" }).stdout.trim() : "";
const noSafePython = !(Number(pythonVersion) >= 311);
const noPerl = !existsSync(PERL);

const LOADERS = ["NODE_OPTIONS", "NODE_PATH", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PERL5LIB", "PERL5OPT", "PERLLIB", "PERL_USE_UNSAFE_INC", "RUBYLIB", "RUBYOPT"];

let wd = "";
const run = async (argv: string[], extra: Partial<SandboxPolicyInput> = {}) =>
  launch({ ...basePolicy(wd), argv, cwd: "/work", stdin: "", ...extra });

beforeAll(() => {
  setupNative();
  wd = makeWorkdir();
  // What an earlier approved job could have left in the workspace.
  const planted = 'import sys\nprint("PLANTED", __name__)\nsys.stdout.flush()\n';
  writeFileSync(join(wd, "this.py"), planted);
  writeFileSync(join(wd, "json.py"), planted);
  mkdirSync(join(wd, "tool"));
  writeFileSync(join(wd, "tool", "json.py"), planted);
  writeFileSync(join(wd, "tool", "report.py"), 'import json\nprint(json.dumps({"ok": 1}))\n');
  writeFileSync(join(wd, "Foo.pm"), 'package Foo; print "PLANTED\\n"; 1;\n');
});
afterAll(() => removeWorkdir(wd));

describe("interpreters in a lease do not import from the workspace", () => {
  it("the default environment: HOME, LANG, PYTHONSAFEPATH=1, PYTHONDONTWRITEBYTECODE=1 and no loader variable, even when the launching process has them", async () => {
    const saved = LOADERS.map((k) => [k, process.env[k]] as const);
    for (const k of LOADERS) process.env[k] = "/work";
    try {
      const r = await run(["/usr/bin/env"]);
      const env = Object.fromEntries(r.stdout.toString().trim().split("\n").map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]));
      expect(env).toEqual({ PATH: "/usr/bin:/bin", ...SANDBOX_DEFAULT_ENV });
      expect(SANDBOX_DEFAULT_ENV).toMatchObject({ PYTHONSAFEPATH: "1", PYTHONDONTWRITEBYTECODE: "1" });
    } finally {
      for (const [k, v] of saved) if (v === undefined) delete process.env[k]; else process.env[k] = v;
    }
  });

  it.skipIf(noSafePython)(`python3 -m this runs the standard module, not /work/this.py${noSafePython ? ` (skipped: no Python ≥ 3.11 at ${PYTHON}: ${pythonVersion || "absent"})` : ""}`, async () => {
    const r = await run([PYTHON, "-m", "this"]);
    expect(r.stdout.toString()).not.toContain("PLANTED");
    expect(r.stdout.toString()).toContain("Beautiful is better than ugly.");
  });

  it.skipIf(noSafePython)(`python3 -m json.tool and python3 -c 'import json' use the standard json, not /work/json.py${noSafePython ? " (skipped: no Python ≥ 3.11)" : ""}`, async () => {
    const tool = await run([PYTHON, "-m", "json.tool"], { stdin: '{"a":1}' });
    expect(tool.stdout.toString()).toBe('{\n    "a": 1\n}\n');
    const c = await run([PYTHON, "-c", "import json; print(json.__file__)"]);
    expect(c.stdout.toString()).toMatch(/^\/usr\/lib\/python3[.\d]*\/json\/__init__\.py\n$/);
  });

  it.skipIf(noSafePython)(`a script's own directory is not searched either (tool/json.py beside tool/report.py)${noSafePython ? " (skipped: no Python ≥ 3.11)" : ""}`, async () => {
    const r = await run([PYTHON, "/work/tool/report.py"]);
    expect(r.stdout.toString()).toBe('{"ok": 1}\n');
  });

  it.skipIf(noSafePython)(`no bytecode is written into the workspace when a job imports its own module on purpose${noSafePython ? " (skipped: no Python ≥ 3.11)" : ""}`, async () => {
    // A workspace of its own: the top is the lease uid's for the run, so
    // Python could write there (a __pycache__ an earlier lease uid made
    // would not be writable, and would prove nothing).
    const own = makeWorkdir();
    try {
      writeFileSync(join(own, "helper.py"), "VALUE = 7\n");
      const r = await launch({ ...basePolicy(own), argv: [PYTHON, "-c", "import sys; sys.path.insert(0, '/work'); import helper; print(helper.VALUE)"] });
      expect(r.stdout.toString()).toBe("7\n");
      expect(existsSync(join(own, "__pycache__")) ? readdirSync(join(own, "__pycache__")) : []).toEqual([]);
    } finally {
      removeWorkdir(own);
    }
  });

  it.skipIf(noSafePython)(`a policy that names PYTHONSAFEPATH itself decides (the hub rates such an env as high risk)${noSafePython ? " (skipped: no Python ≥ 3.11)" : ""}`, async () => {
    const r = await run([PYTHON, "-m", "this"], { env: { PATH: "/usr/bin:/bin", PYTHONSAFEPATH: "" } });
    expect(r.stdout.toString()).toContain("PLANTED");
  });

  it.skipIf(noPerl)(`perl -e 'require Foo' does not find /work/Foo.pm; @INC has no "."${noPerl ? ` (skipped: no ${PERL})` : ""}`, async () => {
    const r = await run([PERL, "-e", 'print join(":", @INC), "\\n"; eval { require Foo; 1 } or print "NOT FOUND\\n";']);
    const [inc, verdict] = r.stdout.toString().trim().split("\n");
    expect(inc?.split(":")).not.toContain(".");
    expect(verdict).toBe("NOT FOUND");
  });
});
