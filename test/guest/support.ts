/**
 * Guest end-to-end fixtures: a real hub (`leasehold start`), real guest
 * processes (`leasehold-guest run`), and the pipeline called in the test
 * process against the hub's PostgreSQL database with the hub's own job key —
 * the same `submitAction` the MCP endpoint and the console call.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { eq } from "drizzle-orm";
import { createCapabilityRegistry } from "../../server/capabilities";
import { hostReportReadiness, type PipelineDeps } from "../../server/actions";
import { canonicalDigest } from "../../server/canonical";
import type { Database, DatabaseHandle } from "../../server/db";
import { actions, hosts, jobs } from "../../server/db/schema";
import { loadOrCreateJobKey, signJob, type JobKey } from "../../server/dispatch";
import { createCompletionWaiter } from "../../server/actions/completion";
import { announce } from "../../server/jobs";
import { ROOT, childEnv, dyingWithParent, runCli } from "../support/hub-process";
import { testShellPolicy } from "../support/shell-policy";

export const GUEST_BIN = path.join(ROOT, "bin", "leasehold-guest.mjs");

export function guestDeps(handle: DatabaseHandle, dataDir: string): PipelineDeps {
  return {
    handle,
    registry: createCapabilityRegistry(),
    readiness: hostReportReadiness(handle.db),
    jobKey: loadOrCreateJobKey(dataDir),
    completion: createCompletionWaiter(handle),
    settings: { approvalPollMs: 200 },
  };
}

/** A root-owned 0644 ceiling file (the guest refuses anything else). */
export function writeCeiling(dir: string, workspace: string, overrides: { memory_bytes?: number; egress?: string[]; host_paths?: unknown[] } = {}): string {
  fs.mkdirSync(workspace, { recursive: true, mode: 0o755 });
  const file = path.join(dir, "ceiling.json");
  const ceiling = {
    version: 1,
    workspace_root: workspace,
    exec_dirs: ["/bin", "/sbin", "/usr/bin", "/usr/sbin"],
    egress: overrides.egress ?? [],
    ...(overrides.host_paths === undefined ? {} : { host_paths: overrides.host_paths }),
    max: { memory_bytes: overrides.memory_bytes ?? 1 << 30, cpus: 2, pids: 512, timeout_ms: 3600_000, output_bytes: 8 << 20, tmpfs_bytes: 256 << 20, tmpfs_inodes: 65_536 },
  };
  fs.writeFileSync(file, JSON.stringify(ceiling), { mode: 0o644 });
  return file;
}

/** Mount points in this mount namespace at or below `dir`, deepest last. */
export function mountsUnder(dir: string): string[] {
  const unescape = (x: string) => x.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  return fs
    .readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .map((line) => line.split(" ")[4])
    .filter((m): m is string => m !== undefined)
    .map(unescape)
    .filter((m) => m === dir || m.startsWith(`${dir}/`));
}

/**
 * Test teardown for guests that could not unmount their bounded workspace
 * themselves (killed with SIGKILL): lazily unmounts what is left under
 * `dirs` (loop autoclear then frees the loop device). Returns what it had
 * to unmount.
 */
export function unmountLeftovers(dirs: readonly string[]): string[] {
  const left = dirs.flatMap((d) => mountsUnder(d));
  for (const m of left.reverse()) spawnSync("umount", ["-l", m]);
  return left;
}

export interface RunningGuest {
  process: ChildProcess;
  stateDir: string;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function enrolCode(env: Record<string, string | undefined>, name: string): Promise<string> {
  const r = await runCli(["host", "enrol-code", "--name", name, "--ttl", "5m"], env);
  if (r.code !== 0) throw new Error(`enrol-code failed: ${r.stderr}`);
  const code = r.stdout.split("\n").find((l) => l.startsWith("lhe_"));
  if (code === undefined) throw new Error(`no code in ${r.stdout}`);
  return code;
}

/**
 * Starts `leasehold-guest run`. `wrap` prefixes the command line, e.g. to
 * enter another network namespace first (test/support/netns.ts). The guest
 * dies with this process (dyingWithParent).
 */
export function startGuest(args: { hub: string; stateDir: string; ceiling: string; code?: string; insecureHttp?: boolean; wrap?: (argv: string[]) => string[] }): RunningGuest {
  // The code goes in on stdin (never argv), as `leasehold start` hands it to its local guest.
  const guest = [process.execPath, GUEST_BIN, "run", "--state-dir", args.stateDir, "--ceiling", args.ceiling, "--hub", args.hub, ...(args.code ? ["--enrol-stdin"] : []), ...(args.insecureHttp ? ["--insecure-http"] : [])];
  const [command, ...argv] = dyingWithParent(args.wrap === undefined ? guest : args.wrap(guest));
  const child = spawn(command!, argv, { cwd: ROOT, env: childEnv({}) as NodeJS.ProcessEnv, stdio: ["pipe", "pipe", "pipe"] });
  child.stdin.end(args.code ? `${args.code}\n` : "");
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return {
    process: child,
    stateDir: args.stateDir,
    output: () => out,
    async kill(signal: NodeJS.Signals = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Waits until the named host's guest has reported health (so the pipeline sees it ready). */
export async function waitForHost(db: Database, name: string): Promise<{ id: string; publicKey: string }> {
  return waitFor(`host ${name} to report`, async () => {
    const [row] = await db.select().from(hosts).where(eq(hosts.name, name));
    const health = row?.health as { report?: { online?: boolean } } | undefined;
    return row !== undefined && health?.report?.online === true ? { id: row.id, publicKey: row.publicKey } : undefined;
  });
}

/**
 * Queues a job the way dispatch does, but from the test: for tampering and
 * replay tests, which need a job no honest pipeline would produce. `mutate`
 * edits the document after it is signed (a tampered job); `mutateSigned`
 * edits it before signing (a job the hub's key covers whose action no longer
 * matches its action_hash: only the guest's own hash check can catch it).
 */
export async function queueRawJob(
  db: Database,
  key: JobKey,
  host: { id: string; name: string },
  input: {
    command: string;
    network?: { mode: "none" } | { mode: "egress"; egress: string[] };
    leaseMode?: "exclusive" | "observe";
    mutate?: (doc: Record<string, unknown>) => void;
    mutateSigned?: (doc: Record<string, unknown>) => void;
    /** The compiled policy's host paths (docs/design.md#ceiling). */
    mounts?: Array<{ label: string; path: string; mode: "ro" | "rw" }>;
    /** Another operation than shell.run_command (e.g. workspace.rollback) with its own arguments. */
    operation?: { capability: string; name: string; arguments: Record<string, unknown> };
  },
): Promise<{ actionId: string; jobId: string }> {
  const policy = { ...testShellPolicy(input.network), ...(input.mounts === undefined ? {} : { mounts: input.mounts }) };
  const action = {
    schema: "leasehold.action/1",
    operation: input.operation?.name ?? "run_command",
    capability: { id: input.operation?.capability ?? "shell", version: "1.0.0" },
    mutating: true,
    host,
    arguments: input.operation?.arguments ?? { host: host.name, command: input.command, cwd: ".", env: {}, stdin: "" },
    policy,
  };
  const actionId = randomUUID();
  const jobId = randomUUID();
  const hash = canonicalDigest(action);
  const deadline = new Date(Date.now() + 120_000);
  await db.insert(actions).values({ id: actionId, channel: "console", callerKey: "admin:test", operation: action.operation, capabilityId: action.capability.id, hostId: host.id, actionHash: hash, prepared: action, riskLevel: "low", state: "dispatched" });
  const document = { schema: "leasehold.job/1" as const, job_id: jobId, action_id: actionId, action_hash: hash, host_id: host.id, action, payload: {} as never, deadline: deadline.toISOString(), key_id: key.keyId, lease: { id: randomUUID(), mode: input.leaseMode ?? "exclusive" } };
  input.mutateSigned?.(document as unknown as Record<string, unknown>);
  const signed = signJob(document, key);
  const stored = structuredClone(document) as unknown as Record<string, unknown>;
  input.mutate?.(stored);
  await db.insert(jobs).values({ id: jobId, actionId, hostId: host.id, payload: stored, signature: signed.signature, state: "queued", deadline });
  await announce(db, `job:${host.id}`);
  return { actionId, jobId };
}

export async function actionRow(db: Database, id: string) {
  const [row] = await db.select().from(actions).where(eq(actions.id, id));
  return row;
}

export { rejectionOf as refusal } from "../support/refusals";
