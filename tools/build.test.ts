/**
 * The executables run compiled JavaScript: `bin/leasehold.mjs`
 * and `bin/leasehold-guest.mjs` import only what `tools/build.mjs` wrote to
 * dist/, never compile TypeScript at run time, never keep a cache in a shared
 * temporary directory, and refuse with one line when the build is missing,
 * older than the sources or writable by others. The refusals are tested on a
 * throwaway checkout (real build script, real bins, two tiny entries) so the
 * real sources are never edited while other tests run.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readBundleDir } from "../server/trust/bundle";
import { ROOT, runProcess } from "../test/support/hub-process";

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  scratch.push(dir);
  return dir;
}

const sha256 = (file: string): string => createHash("sha256").update(fs.readFileSync(file)).digest("hex");
const mode = (file: string): number => fs.statSync(file).mode & 0o777;

interface Stamp {
  outputs: Record<string, string>;
  inputs: Record<string, { sha256: string; size: number; mtimeMs: number }>;
}

describe("the installed executables", () => {
  it("run without a TypeScript loader: nothing is written to the temporary directory (tsx kept its cache there)", async () => {
    const tmp = tempDir("lh-exec-tmpdir-");
    const env = { ...process.env, TMPDIR: tmp } as Record<string, string>;
    const hub = await runProcess(process.execPath, [path.join(ROOT, "bin", "leasehold.mjs"), "--version"], { env });
    expect(hub.stderr).toBe("");
    expect(hub.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const guest = await runProcess(process.execPath, [path.join(ROOT, "bin", "leasehold-guest.mjs"), "--help"], { env });
    expect(`${guest.stdout}${guest.stderr}`).toContain("usage: leasehold-guest");
    expect(fs.readdirSync(tmp)).toEqual([]);
    for (const name of ["leasehold.mjs", "leasehold-guest.mjs"]) {
      expect(fs.readFileSync(path.join(ROOT, "bin", name), "utf8")).not.toMatch(/\btsx\b/);
      expect(fs.readFileSync(path.join(ROOT, "dist", name), "utf8")).not.toMatch(/from\s*["']tsx/);
    }
  });

  it("are built from every checkout file they run: the stamp holds each file's current hash, npm packages stay outside, and no output is writable by group or others", () => {
    const stamp = JSON.parse(fs.readFileSync(path.join(ROOT, "dist", "build.json"), "utf8")) as Stamp;
    const inputs = Object.keys(stamp.inputs);
    for (const expected of ["bin/leasehold-main.ts", "bin/leasehold-guest-main.ts", "bin/next-web.ts", "server/cli/main.ts", "common/paths/index.ts", "agent-guest/cli.ts", "agent-guest/daemon/runner.ts", "native/index.ts", "package.json", "tsconfig.json", "tools/build.mjs"]) {
      expect(inputs).toContain(expected);
    }
    expect(inputs.filter((rel) => rel.startsWith("..") || rel.includes("node_modules"))).toEqual([]);
    for (const [rel, recorded] of Object.entries(stamp.inputs)) expect({ rel, sha256: sha256(path.join(ROOT, rel)) }).toEqual({ rel, sha256: recorded.sha256 });
    expect(mode(path.join(ROOT, "dist"))).toBe(0o755);
    for (const [name, digest] of Object.entries(stamp.outputs)) {
      expect(mode(path.join(ROOT, "dist", name))).toBe(0o644);
      expect(sha256(path.join(ROOT, "dist", name))).toBe(digest);
    }
  });
});

/** A throwaway checkout: the real build script and bins, two tiny entries, one imported module. */
function scratchCheckout(): string {
  const dir = tempDir("lh-build-checkout-");
  fs.mkdirSync(path.join(dir, "bin"));
  fs.mkdirSync(path.join(dir, "tools"));
  fs.mkdirSync(path.join(dir, "src"));
  fs.mkdirSync(path.join(dir, "agent-guest", "workers"), { recursive: true });
  fs.mkdirSync(path.join(dir, "server", "trust"), { recursive: true });
  fs.mkdirSync(path.join(dir, "tools", "lib"), { recursive: true });
  for (const rel of ["bin/compiled.mjs", "bin/leasehold.mjs", "bin/leasehold-guest.mjs", "tools/build.mjs", "tools/lib/postgres-driver-guard.mjs", "tsconfig.json", "server/trust/bundle-digest.mjs"]) fs.copyFileSync(path.join(ROOT, rel), path.join(dir, rel));
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "leasehold-scratch", type: "module" }));
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"));
  fs.writeFileSync(path.join(dir, "src", "greeting.ts"), 'export const greeting: string = "compiled code ran";\n');
  for (const name of ["leasehold", "leasehold-guest"]) {
    fs.writeFileSync(path.join(dir, "bin", `${name}-main.ts`), `import { greeting } from "../src/greeting";\nexport async function run(argv: string[]): Promise<number> {\n  console.log(\`\${greeting}: \${argv.join(" ")}\`);\n  return 0;\n}\n`);
  }
  return dir;
}

/** Runs the scratch checkout's executables build; returns whether it compiled. */
function build(dir: string): boolean {
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", `const { ensureExecutables } = await import(${JSON.stringify(path.join(dir, "tools", "build.mjs"))}); console.log(JSON.stringify(await ensureExecutables()));`], { encoding: "utf8" });
  return JSON.parse(out.trim().split("\n").at(-1)!) as boolean;
}

const runBin = (dir: string, name = "leasehold") => runProcess(process.execPath, [path.join(dir, "bin", `${name}.mjs`), "hello"], { cwd: dir });

function expectRefusal(r: { code: number | null; stdout: string; stderr: string }, name: string, reason: RegExp) {
  expect(r.code).toBe(1);
  expect(r.stdout).not.toContain("compiled code ran");
  const lines = r.stderr.split("\n").filter((l) => l !== "");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^${name}: ${reason.source}; run \`npm run build\` in `));
}

describe("the build and the executables' start-up check", () => {
  it("compile only when a compiled source changed (a touched but identical file is not a change)", () => {
    const dir = scratchCheckout();
    expect(build(dir)).toBe(true);
    expect(build(dir)).toBe(false);
    const source = path.join(dir, "src", "greeting.ts");
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(source, later, later);
    expect(build(dir)).toBe(false);
    fs.appendFileSync(source, "// changed\n");
    expect(build(dir)).toBe(true);
  });

  it("run the compiled code when the build is current, and refuse with one line naming `npm run build` when it is missing, stale or writable by others", async () => {
    const dir = scratchCheckout();
    expectRefusal(await runBin(dir), "leasehold", /the compiled executables are missing \(dist\/ has no build stamp\)/);

    build(dir);
    expect(await runBin(dir)).toMatchObject({ code: 0, stdout: "compiled code ran: hello\n", stderr: "" });
    expect(await runBin(dir, "leasehold-guest")).toMatchObject({ code: 0, stdout: "compiled code ran: hello\n", stderr: "" });

    const source = path.join(dir, "src", "greeting.ts");
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(source, later, later);
    expect((await runBin(dir)).code).toBe(0);

    const original = fs.readFileSync(source);
    fs.appendFileSync(source, "// changed\n");
    expectRefusal(await runBin(dir), "leasehold", /src\/greeting\.ts changed since the last build/);
    expectRefusal(await runBin(dir, "leasehold-guest"), "leasehold-guest", /src\/greeting\.ts changed since the last build/);
    fs.writeFileSync(source, original);
    expect((await runBin(dir)).code).toBe(0);

    fs.rmSync(source);
    expectRefusal(await runBin(dir), "leasehold", /src\/greeting\.ts is gone since the last build/);
    fs.writeFileSync(source, original);

    fs.chmodSync(path.join(dir, "dist", "leasehold-guest.mjs"), 0o664);
    expectRefusal(await runBin(dir), "leasehold", /dist\/leasehold-guest\.mjs is writable by group or others/);
    fs.chmodSync(path.join(dir, "dist", "leasehold-guest.mjs"), 0o644);
    fs.chmodSync(path.join(dir, "dist"), 0o777);
    expectRefusal(await runBin(dir), "leasehold", /dist\/ is writable by group or others/);
    fs.chmodSync(path.join(dir, "dist"), 0o755);

    fs.rmSync(path.join(dir, "dist", "leasehold.mjs"));
    expectRefusal(await runBin(dir), "leasehold", /dist\/leasehold\.mjs is missing/);
  });

  it("writes the output owner-writable only, whatever the umask", () => {
    const dir = scratchCheckout();
    const script = "await (await import(process.env.BUILD_SCRIPT)).ensureExecutables()";
    execFileSync("sh", ["-c", `umask 000 && exec "$0" --input-type=module -e '${script}'`, process.execPath], { env: { ...process.env, BUILD_SCRIPT: path.join(dir, "tools", "build.mjs") } });
    expect(mode(path.join(dir, "dist"))).toBe(0o755);
    for (const name of fs.readdirSync(path.join(dir, "dist"))) expect({ name, mode: mode(path.join(dir, "dist", name)) }).toEqual({ name, mode: 0o644 });
  });
});

/** A tiny worker of the scratch checkout: imports a sibling module and a node builtin, prints what it was given. */
function addEchoWorker(dir: string, id = "echo"): string {
  const src = path.join(dir, "agent-guest", "workers", id);
  fs.mkdirSync(src, { recursive: true });
  fs.writeFileSync(path.join(src, "shout.ts"), "export const shout = (s: string): string => s.toUpperCase();\n");
  fs.writeFileSync(path.join(src, "main.ts"), 'import { createHash } from "node:crypto";\nimport { shout } from "./shout";\nconst [op, file] = process.argv.slice(-2);\nconsole.log(JSON.stringify({ op: shout(String(op)), file, h: createHash("sha256").update("x").digest("hex").slice(0, 8) }));\n');
  return src;
}

function stampOf(dir: string): { outputs: Record<string, string>; inputs: Record<string, unknown>; workers: string[]; worker_digests: Record<string, string> } {
  return JSON.parse(fs.readFileSync(path.join(dir, "dist", "build.json"), "utf8")) as never;
}

describe("worker bundles (agent-guest/workers/<id>/main.ts → dist/workers/<id>/)", () => {
  it("are built self-contained and deterministic, with the digest bundleDigest gives, and rebuilt when a source changes", async () => {
    const dir = scratchCheckout();
    const src = addEchoWorker(dir);
    fs.writeFileSync(path.join(dir, "agent-guest", "workers", "versions.json"), JSON.stringify({ echo: "0.1.0" }));
    expect(build(dir)).toBe(true);
    const out = path.join(dir, "dist", "workers", "echo");
    expect(fs.readdirSync(out).sort()).toEqual(["bundle.json", "worker.mjs"]);
    expect(JSON.parse(fs.readFileSync(path.join(out, "bundle.json"), "utf8"))).toEqual({ schema: "leasehold.worker-bundle/1", capability: "echo", version: "0.1.0", runtime: "node", entry: "worker.mjs" });
    expect(mode(path.join(dir, "dist", "workers"))).toBe(0o755);
    expect(mode(out)).toBe(0o755);
    for (const name of ["bundle.json", "worker.mjs"]) expect(mode(path.join(out, name))).toBe(0o644);
    const stamp = stampOf(dir);
    const digest = readBundleDir(out).digest;
    expect(stamp.workers).toEqual(["echo"]);
    expect(stamp.worker_digests).toEqual({ echo: digest });
    expect(Object.keys(stamp.inputs)).toEqual(expect.arrayContaining(["agent-guest/workers/echo/main.ts", "agent-guest/workers/echo/shout.ts", "agent-guest/workers/versions.json"]));
    // Run the way the guest runs it: the bytes on stdin, from a directory with no node_modules, the last two argv entries.
    const code = fs.readFileSync(path.join(out, "worker.mjs"));
    expect(code.toString()).not.toMatch(/^import .* from "(?!node:)/m);
    const ran = execFileSync(process.execPath, ["--input-type=module", "-", "inspect", "/work/artifact"], { input: code, cwd: os.tmpdir(), encoding: "utf8" });
    expect(JSON.parse(ran)).toEqual({ op: "INSPECT", file: "/work/artifact", h: "2d711642" });

    // The same sources give the same bytes and digest.
    await new Promise((r) => setTimeout(r, 10));
    execFileSync(process.execPath, ["--input-type=module", "-e", `await (await import(${JSON.stringify(path.join(dir, "tools", "build.mjs"))})).buildExecutables({ force: true })`]);
    expect(readBundleDir(out).digest).toBe(digest);

    // A changed worker source makes the executables stale (they refuse) until rebuilt, with a new digest.
    fs.writeFileSync(path.join(src, "shout.ts"), 'export const shout = (s: string): string => `${s.toUpperCase()}!`;\n');
    expectRefusal(await runBin(dir, "leasehold-guest"), "leasehold-guest", /agent-guest\/workers\/echo\/shout\.ts changed since the last build/);
    expect(build(dir)).toBe(true);
    expect(readBundleDir(out).digest).not.toBe(digest);
    expect((await runBin(dir, "leasehold-guest")).code).toBe(0);
  });

  it("skip nothing: a worker directory without main.ts or without a version fails the build, and a new worker directory makes the build stale", async () => {
    const dir = scratchCheckout();
    expect(build(dir)).toBe(true);
    addEchoWorker(dir);
    expectRefusal(await runBin(dir), "leasehold", /the worker bundles changed since the last build \(now: echo\)/);
    expect(() => build(dir)).toThrow(/worker echo: no version in agent-guest\/workers\/versions\.json/);
    fs.writeFileSync(path.join(dir, "agent-guest", "workers", "versions.json"), JSON.stringify({ echo: "0.1.0" }));
    fs.rmSync(path.join(dir, "agent-guest", "workers", "echo", "main.ts"));
    expect(() => build(dir)).toThrow(/worker echo: agent-guest\/workers\/echo\/main\.ts is missing/);
    // Nothing half-built was published: the old stamp (without the worker) still stands.
    expect(stampOf(dir).workers).toEqual([]);
  });
});
