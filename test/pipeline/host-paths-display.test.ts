/**
 * What people read about host paths: `leasehold approvals show` says which
 * host paths a held action makes readable or writable and as whom, and what
 * a rollback replaces; `leasehold snapshot list` lists the snapshots each
 * host's guest reported (table and --json). The host rows are health reports
 * stored as the hub stores them.
 */
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { submitAction, type Caller, type PipelineDeps } from "../../server/actions";
import { main } from "../../server/cli/main";
import type { Database } from "../../server/db";
import { hosts } from "../../server/db/schema";
import type { HostPathEntry, SnapshotSummary } from "../../server/trust/host-paths";
import { describeEachDatabase } from "../support/databases";
import { rejectionOf } from "../support/refusals";
import { captureCli, insertHost, insertToken, testDeps } from "./support";

const HOST_PATHS: HostPathEntry[] = [
  { label: "logs", path: "/var/log", mode: "ro" },
  { label: "app", path: "/srv/app", mode: "rw", owner: { uid: 1000, gid: 1000 }, max_bytes: 1 << 30 },
];
const digest = (c: string) => `sha256:${c.repeat(64)}`;
const SNAPSHOTS: SnapshotSummary[] = [
  { id: "snap-2", label: "app", created_at: "2026-12-06T08:00:00.000Z", bytes: 2048, files: 3, tree_digest: digest("b") },
  { id: "snap-1", label: "app", created_at: "2026-12-06T07:00:00.000Z", bytes: 1024, files: 2, tree_digest: digest("a") },
];

async function hostWith(d: Database, snapshots: SnapshotSummary[] = SNAPSHOTS): Promise<{ id: string; name: string }> {
  const host = await insertHost(d);
  await d.update(hosts).set({ health: { host_paths: HOST_PATHS, snapshots } }).where(eq(hosts.id, host.id));
  return host;
}

async function heldId(deps: PipelineDeps, caller: Caller, operation: string, args: Record<string, unknown>): Promise<string> {
  const held = await rejectionOf(submitAction(deps, caller, { operation, arguments: args, channel: "mcp" }, { waitMs: 0 }));
  expect(held.code).toBe("APPROVAL_PENDING");
  return String(held.details?.["action_id"]);
}

describeEachDatabase("host paths as people read them", (db) => {
  it("approvals show says which host paths become readable and which writable as whom, and not the raw mounts argument", async () => {
    const d = db().handle.db;
    const host = await hostWith(d);
    const id = await heldId(testDeps(db().handle), await insertToken(d), "run_command", { host: host.name, command: "cp /host/logs/app.log /host/app/", mounts: ["logs", { label: "app", mode: "rw" }] });
    const { ctx, out } = captureCli(db().handle);
    expect(await main(["approvals", "show", id], ctx)).toBe(0);
    const text = out.join("\n");
    expect(text).toContain("  host paths (2):");
    expect(text).toContain("    /srv/app becomes writable as uid 1000, gid 1000 (label app; snapshotted before the job runs, snapshot budget 1073741824 bytes)");
    expect(text).toContain("    /var/log becomes readable (label logs)");
    expect(text).toMatch(/\[medium\] host_path\.rw — host path \/srv\/app \(label app\) becomes writable/);
    expect(text).not.toMatch(/^ {2}mounts: /m);
  });

  it("approvals show of a rollback names the snapshot that replaces the label's tree", async () => {
    const d = db().handle.db;
    const host = await hostWith(d);
    const id = await heldId(testDeps(db().handle), await insertToken(d), "rollback", { host: host.name, label: "app", snapshot_id: "snap-1" });
    const { ctx, out } = captureCli(db().handle);
    expect(await main(["approvals", "show", id], ctx)).toBe(0);
    const text = out.join("\n");
    expect(text).toMatch(/risk high/);
    expect(text).toContain("    /srv/app is restored to snapshot snap-1, replacing everything written since (label app)");
    expect(text).toContain("  reach: the guest restores it itself; nothing is launched · host path label app (/srv/app) restored; the workspace is not touched");
    expect(text).not.toMatch(/workspace read-write/);
  });

  it("snapshot list: a table of every host's reported snapshots with the label's path, --host narrows, --json gives the rows, an unknown host is NOT_FOUND", async () => {
    const d = db().handle.db;
    const host = await hostWith(d);
    const empty = await hostWith(d, []);
    const table = captureCli(db().handle);
    expect(await main(["snapshot", "list", "--host", host.name], table.ctx)).toBe(0);
    expect(table.out[0]).toMatch(/^HOST +SNAPSHOT +LABEL +PATH +CREATED +BYTES +FILES +TREE$/);
    expect(table.out.slice(1)).toEqual([
      expect.stringMatching(new RegExp(`^${host.name} +snap-2 +app +/srv/app +2026-12-06T08:00:00.000Z +2048 +3 +sha256:b{64}$`)),
      expect.stringMatching(new RegExp(`^${host.name} +snap-1 +app +/srv/app +2026-12-06T07:00:00.000Z +1024 +2 +sha256:a{64}$`)),
    ]);

    const json = captureCli(db().handle);
    expect(await main(["snapshot", "list", "--host", host.name, "--json"], json.ctx)).toBe(0);
    const parsed = JSON.parse(json.out.join("\n")) as { snapshots: Array<Record<string, unknown>> };
    expect(parsed.snapshots).toEqual(SNAPSHOTS.map((s) => ({ host: host.name, path: "/srv/app", ...s })));

    const none = captureCli(db().handle);
    expect(await main(["snapshot", "list", "--host", empty.name], none.ctx)).toBe(0);
    expect(none.out).toEqual([`no snapshots on ${empty.name} (a guest snapshots a rw host path before each approved job that writes it)`]);

    const all = captureCli(db().handle);
    expect(await main(["snapshot", "list", "--json"], all.ctx)).toBe(0);
    const everyHost = (JSON.parse(all.out.join("\n")) as { snapshots: Array<{ host: string }> }).snapshots.map((s) => s.host);
    expect(everyHost.filter((name) => name === host.name)).toHaveLength(2);

    const unknown = captureCli(db().handle);
    expect(await main(["snapshot", "list", "--host", "no-such-host"], unknown.ctx)).toBe(1);
    expect(unknown.err.join("\n")).toMatch(/no enrolled host named "no-such-host".*NOT_FOUND/);
  });
});
