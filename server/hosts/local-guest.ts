/**
 * The local guest `leasehold start` runs for this machine (host "local",
 * loopback, LEASEHOLD_LOCAL_GUEST=0 turns it off). The hub only prepares and
 * supervises it: a default ceiling file (written once, root-owned 0644 when
 * the hub runs as root, 0600 like everything in the private data directory;
 * an operator may edit it), an enrolment code on first start — handed to the
 * child through a pipe on its stdin (`--enrol-stdin`), never on its command
 * line — and a child process `leasehold-guest run`. The guest then talks to
 * the hub over loopback HTTP exactly like a remote one — signed requests, no
 * shortcuts — and the hub never loads the sandbox addon itself.
 *
 * The guest ends with its hub, however the hub ends: it runs under a death
 * signal (`guestArgv`), so a hub that is SIGKILLed, OOM-killed or crashes
 * takes its guest down through the guest's own SIGTERM path (running jobs
 * end as on any stop, the workspace is unmounted). A guest left behind
 * would keep the data directory's guest state in use, and the next
 * `leasehold start` there would run a second guest for host "local".
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { HubConfig } from "../config";
import { and, eq, isNull } from "drizzle-orm";
import type { Database } from "../db";
import { hosts } from "../db/schema";
import { hashActor } from "../ledger/entry";
import { createEnrolCode } from "./enrolment";
import { startingProcessUmask } from "../db/data-dir";

export const LOCAL_HOST_NAME = "local";

export interface LocalGuestPaths {
  stateDir: string;
  ceiling: string;
  workspace: string;
}

export function localGuestPaths(dataDir: string): LocalGuestPaths {
  return { stateDir: path.join(dataDir, "guest"), ceiling: path.join(dataDir, "guest-ceiling.json"), workspace: path.join(dataDir, "workspace") };
}

/**
 * The default ceiling: the built-in capabilities' limits fit; no egress (tier
 * C could not enforce it anyway). Programs from the distribution only:
 * /usr/local holds the operator's own installs, which a lease sees only
 * where the operator lists a directory there (here and in a manifest).
 */
export function defaultCeiling(workspace: string): Record<string, unknown> {
  return {
    version: 1,
    workspace_root: workspace,
    exec_dirs: ["/bin", "/sbin", "/usr/bin", "/usr/sbin"],
    egress: [],
    // The workspace's kernel bound (an ext4 image on a loop device, agent-guest/workspace/volume.ts).
    workspace_max_bytes: 1024 * 1024 * 1024,
    workspace_max_inodes: 100_000,
    max: {
      memory_bytes: 1024 * 1024 * 1024,
      cpus: Math.max(1, os.cpus().length),
      pids: 512,
      timeout_ms: 3600_000,
      output_bytes: 8 * 1024 * 1024,
      tmpfs_bytes: 256 * 1024 * 1024,
      tmpfs_inodes: 65_536,
    },
  };
}

export function loopbackUrl(config: HubConfig): string {
  const host = config.host === "0.0.0.0" || config.host === "::" || config.host === "[::]" ? "127.0.0.1" : config.host;
  const shown = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return `http://${shown}:${config.port}`;
}

/** util-linux's setpriv: sets the death signal (PR_SET_PDEATHSIG), then execs the command as the same process. */
export const SETPRIV = "/usr/bin/setpriv";

/**
 * The command line that runs the guest (`node GUEST_BIN ARGS…`) so that the
 * kernel sends it SIGTERM when the hub process dies. Throws, naming what is
 * missing, where that cannot be arranged: the local guest is then not
 * started at all rather than started without it.
 */
export function guestArgv(nodeArgs: readonly string[], setpriv = SETPRIV): string[] {
  if (!fs.existsSync(setpriv)) {
    throw new Error(
      `${setpriv} (util-linux) is missing, so the local guest could not be tied to this hub's life (it would outlive a killed hub); install util-linux, or set LEASEHOLD_LOCAL_GUEST=0 and run leasehold-guest yourself`,
    );
  }
  return [setpriv, "--pdeathsig", "TERM", "--", process.execPath, ...nodeArgs];
}

export interface RunningLocalGuest {
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts the local guest, or returns null when host "local" is already
 * enrolled from another data directory (a second hub replica on the same
 * database must not take the name over).
 */
export async function startLocalGuest(config: HubConfig, db: Database, guestBin: string, log: (line: string) => void): Promise<RunningLocalGuest | null> {
  const paths = localGuestPaths(config.dataDir);
  // First: where the guest cannot be made to die with the hub, nothing is prepared or started.
  const argv = guestArgv([guestBin, "run", "--state-dir", paths.stateDir, "--ceiling", paths.ceiling, "--hub", loopbackUrl(config)]);
  const enrolled = fs.existsSync(path.join(paths.stateDir, "enrolment.json"));
  if (!enrolled) {
    const [existing] = await db.select({ id: hosts.id }).from(hosts).where(and(eq(hosts.name, LOCAL_HOST_NAME), isNull(hosts.removedAt)));
    if (existing !== undefined) {
      log(`leasehold: host "${LOCAL_HOST_NAME}" is enrolled from another data directory; not starting a local guest here`);
      return null;
    }
  }
  fs.mkdirSync(paths.workspace, { recursive: true, mode: 0o700 });
  if (!fs.existsSync(paths.ceiling)) {
    // Private like everything in the data directory; the guest (root) reads it.
    fs.writeFileSync(paths.ceiling, `${JSON.stringify(defaultCeiling(paths.workspace), null, 2)}\n`, { mode: 0o600, flag: "wx" });
  }
  let code: string | undefined;
  if (!enrolled) {
    code = (await createEnrolCode(db, { name: LOCAL_HOST_NAME, ttlMs: 5 * 60_000, actor: hashActor("system", "leasehold start") })).code;
    // The code goes through the pipe on fd 0, never argv: /proc/PID/cmdline is readable by every local user.
    argv.push("--enrol-stdin");
  }
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("LEASEHOLD_") && k !== "DATABASE_URL") env[k] = v;
  // The bench's stage trace follows a call into the guest too (common/trace/stage.ts).
  if (process.env["LEASEHOLD_STAGE_TRACE"] !== undefined) env["LEASEHOLD_STAGE_TRACE"] = process.env["LEASEHOLD_STAGE_TRACE"];
  // An operator's cap on the BPF tier is the guest's to enforce (native/bpf.ts).
  if (process.env["LEASEHOLD_BPF_TIER"] !== undefined) env["LEASEHOLD_BPF_TIER"] = process.env["LEASEHOLD_BPF_TIER"];
  // The hub runs with umask 077 (server/db/data-dir.ts); the guest keeps the mask the hub was started with.
  const hubMask = process.umask(startingProcessUmask());
  let child: ChildProcess;
  try {
    child = spawn(argv[0]!, argv.slice(1), { stdio: [code === undefined ? "ignore" : "pipe", "inherit", "inherit"], env: env as NodeJS.ProcessEnv });
  } finally {
    process.umask(hubMask);
  }
  if (code !== undefined) {
    // A guest that dies before reading must not take the hub down with EPIPE.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(`${code}\n`);
  }
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  child.on("exit", (code, signal) => {
    if (code !== 0 && signal !== "SIGTERM") log(`leasehold: local guest exited (${signal ?? `code ${code}`})`);
  });
  return {
    process: child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
