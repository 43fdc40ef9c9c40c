/**
 * The local guest `leasehold start` runs for this machine (host "local",
 * loopback, LEASEHOLD_LOCAL_GUEST=0 turns it off). The hub only prepares and
 * supervises it: a default ceiling file (written once, root-owned 0644 when
 * the hub runs as root; an operator may edit it), an enrolment code on first
 * start, and a child process `leasehold-guest run`. The guest then talks to
 * the hub over loopback HTTP exactly like a remote one — signed requests, no
 * shortcuts — and the hub never loads the sandbox addon itself.
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

export const LOCAL_HOST_NAME = "local";

export interface LocalGuestPaths {
  stateDir: string;
  ceiling: string;
  workspace: string;
}

export function localGuestPaths(dataDir: string): LocalGuestPaths {
  return { stateDir: path.join(dataDir, "guest"), ceiling: path.join(dataDir, "guest-ceiling.json"), workspace: path.join(dataDir, "workspace") };
}

/** The default ceiling: the built-in capabilities' limits fit; no egress (tier C could not enforce it anyway). */
export function defaultCeiling(workspace: string): Record<string, unknown> {
  return {
    version: 1,
    workspace_root: workspace,
    exec_dirs: ["/bin", "/sbin", "/usr/bin", "/usr/local/bin", "/usr/sbin"],
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
  const enrolled = fs.existsSync(path.join(paths.stateDir, "enrolment.json"));
  if (!enrolled) {
    const [existing] = await db.select({ id: hosts.id }).from(hosts).where(and(eq(hosts.name, LOCAL_HOST_NAME), isNull(hosts.removedAt)));
    if (existing !== undefined) {
      log(`leasehold: host "${LOCAL_HOST_NAME}" is enrolled from another data directory; not starting a local guest here`);
      return null;
    }
  }
  fs.mkdirSync(paths.workspace, { recursive: true, mode: 0o755 });
  if (!fs.existsSync(paths.ceiling)) {
    fs.writeFileSync(paths.ceiling, `${JSON.stringify(defaultCeiling(paths.workspace), null, 2)}\n`, { mode: 0o644, flag: "wx" });
  }
  const args = [guestBin, "run", "--state-dir", paths.stateDir, "--ceiling", paths.ceiling, "--hub", loopbackUrl(config)];
  if (!enrolled) {
    const { code } = await createEnrolCode(db, { name: LOCAL_HOST_NAME, ttlMs: 5 * 60_000, actor: hashActor("system", "leasehold start") });
    args.push("--enrol-code", code);
  }
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("LEASEHOLD_") && k !== "DATABASE_URL") env[k] = v;
  const child = spawn(process.execPath, args, { stdio: ["ignore", "inherit", "inherit"], env: env as NodeJS.ProcessEnv });
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
