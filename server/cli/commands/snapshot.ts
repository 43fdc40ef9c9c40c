import { listHostSummaries, type HostSummary } from "../../hosts";
import { escapeForTerminal } from "../../approvals/view";
import { LeaseholdError } from "../../errors";
import { parseCommandArgs, splitSubcommand } from "../args";
import type { CliContext } from "../context";
import { EXIT } from "../io";

const USAGE = "leasehold snapshot list [--host HOST] [--json]";

/** One snapshot row: the host it is on and what its guest reported of it. */
export interface SnapshotRow {
  host: string;
  id: string;
  label: string;
  /** The label's path on the host, from the same report (null when the ceiling no longer lists the label). */
  path: string | null;
  created_at: string;
  bytes: number;
  files: number;
  tree_digest: string;
}

/** The snapshots each host last reported, most recent first per host, hosts by name. */
export function snapshotRows(hosts: readonly HostSummary[], only?: string): SnapshotRow[] {
  return hosts
    .filter((host) => only === undefined || host.name === only)
    .flatMap((host) =>
      host.snapshots.map((snapshot) => ({
        host: host.name,
        id: snapshot.id,
        label: snapshot.label,
        path: host.host_paths?.find((entry) => entry.label === snapshot.label)?.path ?? null,
        created_at: snapshot.created_at,
        bytes: snapshot.bytes,
        files: snapshot.files,
        tree_digest: snapshot.tree_digest,
      })),
    );
}

/** The rows as an aligned table; paths are host-reported text, shown visible-safe. */
export function snapshotTable(rows: readonly SnapshotRow[]): string[] {
  const header = ["HOST", "SNAPSHOT", "LABEL", "PATH", "CREATED", "BYTES", "FILES", "TREE"];
  const cells = rows.map((r) => [r.host, r.id, r.label, r.path === null ? "-" : escapeForTerminal(r.path), r.created_at, String(r.bytes), String(r.files), r.tree_digest]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((row) => row[i]?.length ?? 0)));
  const line = (row: string[]): string => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  ");
  return [line(header), ...cells.map(line)];
}

export const snapshotCommand = {
  name: "snapshot",
  summary: "list the host path snapshots each host's guest reported (rollback restores one)",
  usage: USAGE,
  async run(args: string[], ctx: CliContext): Promise<number> {
    const { rest } = splitSubcommand(args, ["list"]);
    const { values } = parseCommandArgs(rest, { host: { type: "string" }, json: { type: "boolean" } });
    const hosts = await ctx.withDatabase("leasehold snapshot list", ({ handle }) => listHostSummaries(handle.db));
    if (values.host !== undefined && !hosts.some((host) => host.name === values.host)) {
      throw new LeaseholdError("NOT_FOUND", `no enrolled host named ${JSON.stringify(values.host)}`, { tier: "hub", hint: "leasehold host list shows enrolled hosts" });
    }
    const rows = snapshotRows(hosts, values.host);
    if (values.json === true) {
      ctx.out(JSON.stringify({ snapshots: rows }, null, 2));
      return EXIT.ok;
    }
    if (rows.length === 0) {
      ctx.out(`no snapshots${values.host === undefined ? "" : ` on ${values.host}`} (a guest snapshots a rw host path before each approved job that writes it)`);
      return EXIT.ok;
    }
    for (const line of snapshotTable(rows)) ctx.out(line);
    return EXIT.ok;
  },
};
