/**
 * Shared set-up for the MCP bench scripts: a real hub (`leasehold start`) on
 * PGlite, or on DATABASE_URL when set, and a token issued through the CLI.
 */
import fs from "node:fs";
import { startHub, runCli, type RunningHub } from "../../../test/support/hub-process";

export async function benchHub(databaseUrl: string | undefined, env: Record<string, string> = {}): Promise<{ hub: RunningHub; token: string; cliEnv: Record<string, string | undefined> }> {
  const hub = await startHub({ DATABASE_URL: databaseUrl, ...env });
  const cliEnv = { LEASEHOLD_DATA_DIR: hub.dataDir, LEASEHOLD_PORT: String(hub.port), DATABASE_URL: databaseUrl };
  const created = await runCli(["token", "create", "--name", "bench", "--expires", "1d"], cliEnv);
  const token = created.stdout.split("\n").find((line) => line.startsWith("lh_"));
  if (created.code !== 0 || token === undefined) throw new Error(`token create failed: ${created.stderr}`);
  return { hub, token, cliEnv };
}

/** Resident set size of a process, in KiB, from /proc. */
export function rssKiB(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
}
