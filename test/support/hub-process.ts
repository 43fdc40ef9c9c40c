/**
 * Runs the real `leasehold` executable as a child process, the way a user
 * does, for tests of start-up, bad input and the CLI.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { runInHub } from "../../server/hub/control-socket";
import { freePort } from "../../tools/lib/postgres.mjs";

export const ROOT = path.resolve(import.meta.dirname, "../..");
export const LEASEHOLD_BIN = path.join(ROOT, "bin", "leasehold.mjs");

/** The environment a child gets: the test's own LEASEHOLD_* settings only. */
export function childEnv(extra: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith("LEASEHOLD_") && k !== "DATABASE_URL" && !k.startsWith("VITEST") && v !== undefined) env[k] = v;
  }
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command to its end and collects its output; killed (and the promise
 * rejected, naming `label`) when it outlives `timeoutMs`. Without `env` the
 * child inherits this process's environment.
 */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number; label?: string } = {},
): Promise<CliResult> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { cwd: options.cwd ?? ROOT, ...(options.env === undefined ? {} : { env: options.env as NodeJS.ProcessEnv }) });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${options.label ?? command} did not finish in ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Runs `leasehold <argv>` inside the running hub on `dataDir`, through its
 * control socket — what the CLI does itself while a hub holds the data
 * directory — without starting a CLI process (a second of CPU each). For a
 * test's set-up (tokens, admins); a test of the CLI itself uses runCli.
 */
export async function runInRunningHub(dataDir: string, argv: string[], cwd = ROOT, env: Record<string, string> = {}): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const code = await runInHub(dataDir, { argv, env, cwd }, { out: (line) => (stdout += `${line}\n`), err: (line) => (stderr += `${line}\n`) });
  return { code, stdout, stderr };
}

/**
 * Waits until `leasehold host list` shows the hub's local guest with a tier:
 * its first health report is stored, so a capability on "local" is ready
 * (until then a call is refused CAPABILITY_UNAVAILABLE, "has not reported").
 */
export async function localGuestTierRecorded(hub: { dataDir: string }, timeoutMs = 60_000): Promise<void> {
  for (const until = Date.now() + timeoutMs; ; ) {
    const listed = await runInRunningHub(hub.dataDir, ["host", "list"]);
    if (listed.code === 0 && /^local .* tier [ABC] /m.test(listed.stdout)) return;
    if (Date.now() > until) throw new Error(`the local guest reported no tier within ${timeoutMs / 1000} s:\n${listed.stdout}${listed.stderr}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export function runCli(args: string[], env: Record<string, string | undefined> = {}, timeoutMs = 60_000, cwd = ROOT): Promise<CliResult> {
  return runProcess(process.execPath, [LEASEHOLD_BIN, ...args], { env: childEnv(env), cwd, timeoutMs, label: `leasehold ${args.join(" ")}` });
}

/** util-linux's setpriv: sets PR_SET_PDEATHSIG, then execs the command (same pid). */
const SETPRIV = "/usr/bin/setpriv";

/** Whether `pid` still runs: a process that has exited but is not yet reaped (a zombie) does not. */
export function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] !== "Z";
  } catch {
    return false;
  }
}

/**
 * The command line that runs `argv` so that the kernel SIGKILLs it when the
 * test process that spawned it dies. A test file's worker can end while a
 * hub it started is still running: a start that outlives its beforeAll's
 * timeout, a worker killed at the end of its file, a crash. Without this the
 * hub (or guest, or load balancer) would be left holding its port and data
 * directory. Refused, not skipped, where setpriv is missing.
 */
export function dyingWithParent(argv: readonly string[]): string[] {
  if (!fs.existsSync(SETPRIV)) throw new Error(`${SETPRIV} (util-linux) is missing: a test's child processes could outlive the test`);
  return [SETPRIV, "--pdeathsig", "KILL", "--", ...argv];
}

export function tempDir(prefix = "lh-test-"): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export interface RunningHub {
  url: string;
  port: number;
  dataDir: string;
  process: ChildProcess;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function requireWebBuild(): void {
  if (!fs.existsSync(path.join(ROOT, ".next", "BUILD_ID"))) {
    throw new Error("the admin UI is not built: run `npm test` (it builds first) or `npm run build`");
  }
}

/**
 * Starts `leasehold start` on a free port and waits until /api/health
 * answers. The hub dies with this process (dyingWithParent).
 *
 * A data directory made here (no LEASEHOLD_DATA_DIR given) for a hub on
 * PGlite (no DATABASE_URL) starts with a migrated database copied in
 * (support/databases.ts). A data directory the caller names is used as the
 * caller left it: a test of the first start, which creates and migrates the
 * database, names one.
 */
export async function startHub(env: Record<string, string | undefined> = {}, timeoutMs = 90_000, options: { wrap?: readonly string[] } = {}): Promise<RunningHub> {
  requireWebBuild();
  const port = Number(env.LEASEHOLD_PORT ?? (await freePort()));
  const dataDir = env.LEASEHOLD_DATA_DIR ?? path.join(tempDir(), "data");
  if (env.LEASEHOLD_DATA_DIR === undefined && env.DATABASE_URL === undefined) {
    // Imported here: the database modules are heavy, and most users of this file start no PGlite hub.
    const { seedPgliteDataDir } = await import("./databases");
    await seedPgliteDataDir(dataDir);
  }
  // `wrap`: a command that execs the hub as its last arguments (same pid), e.g. unshare for a mount namespace of the test's own.
  // LEASEHOLD_BENCH_CPU_PROF=<dir>: the hub writes a V8 CPU profile there when it stops (for benches; node refuses --cpu-prof in NODE_OPTIONS).
  const profile = process.env.LEASEHOLD_BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.LEASEHOLD_BENCH_CPU_PROF}`] : [];
  const argv = dyingWithParent([...(options.wrap ?? []), process.execPath, ...profile, LEASEHOLD_BIN, "start"]);
  const child = spawn(argv[0] as string, argv.slice(1), {
    cwd: ROOT,
    env: childEnv({ LEASEHOLD_PORT: String(port), LEASEHOLD_DATA_DIR: dataDir, ...env }) as NodeJS.ProcessEnv,
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  // A hub told to listen on one address (LEASEHOLD_HOST) answers only there, not on 127.0.0.1.
  const host = env.LEASEHOLD_HOST ?? "127.0.0.1";
  const url = `http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`hub exited with ${child.exitCode} before answering:\n${out}`);
    try {
      // The ready line follows the control socket's start: runInRunningHub may be used from here on.
      const res = await fetch(`${url}/api/health`);
      if (res.ok && out.includes(" — hub ready in ")) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`hub did not answer /api/health within ${timeoutMs} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    port,
    dataDir,
    process: child,
    output: () => out,
    async stop(signal: NodeJS.Signals = "SIGTERM") {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

const healthTokens = new Map<string, string>();

/**
 * The hub's full health. Without a credential `/api/health` says only
 * status and version; an agent token (`Authorization: Bearer`) sees it all,
 * as through the MCP `health` tool. One token per hub, made by `token create`
 * inside the hub (its control socket, as the CLI itself does while a hub
 * runs: no CLI process to start). `env`: the CLI's settings for that hub;
 * what the CLI forwards to a running hub (LEASEHOLD_*) is passed on.
 */
export async function fullHealth<T = Record<string, unknown>>(hub: { url: string; dataDir: string; output?: () => string }, env: Record<string, string | undefined> = {}): Promise<T> {
  let token = healthTokens.get(hub.url);
  if (token === undefined) {
    // Health answers before start-up has finished: a token made earlier would stop the
    // first start from issuing (and printing) its first agent token.
    for (const until = Date.now() + 30_000; hub.output !== undefined && !hub.output().includes("stop with Ctrl-C") && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const forwarded: Record<string, string> = {};
    for (const [k, v] of Object.entries(env)) if (k.startsWith("LEASEHOLD_") && v !== undefined) forwarded[k] = v;
    const made = await runInRunningHub(hub.dataDir, ["token", "create", "--name", "test-health", "--read-only", "--expires", "1d"], ROOT, forwarded);
    token = made.stdout.split("\n").find((line) => line.startsWith("lh_"));
    if (made.code !== 0 || token === undefined) throw new Error(`token create failed (${made.code}): ${made.stderr}${made.stdout}`);
    healthTokens.set(hub.url, token);
  }
  const res = await fetch(`${hub.url}/api/health`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`GET /api/health answered ${res.status}`);
  return (await res.json()) as T;
}
