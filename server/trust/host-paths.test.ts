import { describe, expect, it } from "vitest";
import { CompiledMount, EvidenceMount, HostPathEntry, HostPathsReport, RollbackArguments } from "./host-paths";

describe("host paths contract", () => {
  it("accepts a labelled absolute path with an owner and a budget", () => {
    expect(HostPathEntry.safeParse({ label: "app", path: "/srv/app", mode: "rw", owner: { uid: 1000, gid: 1000 }, max_bytes: 1 << 20, max_inodes: 100 }).success).toBe(true);
  });

  it.each([
    ["the filesystem root", { label: "root", path: "/", mode: "ro" }],
    ["a relative path", { label: "logs", path: "var/log", mode: "ro" }],
    ["a path with ..", { label: "logs", path: "/var/../etc", mode: "ro" }],
    ["a trailing slash", { label: "logs", path: "/var/log/", mode: "ro" }],
    ["an upper-case label", { label: "Logs", path: "/var/log", mode: "ro" }],
    ["a label of 33 characters", { label: `a${"b".repeat(32)}`, path: "/var/log", mode: "ro" }],
    ["a mode other than ro/rw", { label: "logs", path: "/var/log", mode: "wo" }],
    ["an unknown field", { label: "logs", path: "/var/log", mode: "ro", follow: true }],
  ])("refuses %s", (_why, entry) => {
    expect(HostPathEntry.safeParse(entry).success).toBe(false);
  });

  it("parses a health report's host_paths and snapshots and refuses a malformed tree digest", () => {
    const snapshot = { id: "s-1", label: "app", created_at: "2026-01-01T00:00:00.000Z", bytes: 10, files: 1, tree_digest: `sha256:${"a".repeat(64)}` };
    expect(HostPathsReport.safeParse({ host_paths: [], snapshots: [snapshot] }).success).toBe(true);
    expect(HostPathsReport.safeParse({ host_paths: [], snapshots: [{ ...snapshot, tree_digest: "sha256:xyz" }] }).success).toBe(false);
  });

  it("spells a compiled mount, a rollback and an evidence mount strictly", () => {
    expect(CompiledMount.safeParse({ label: "logs", path: "/var/log", mode: "ro" }).success).toBe(true);
    expect(CompiledMount.safeParse({ label: "logs", mode: "ro" }).success).toBe(false);
    expect(RollbackArguments.safeParse({ label: "app", snapshot_id: "s-1" }).success).toBe(true);
    expect(RollbackArguments.safeParse({ label: "app", snapshot_id: "../s-1" }).success).toBe(false);
    expect(EvidenceMount.safeParse({ label: "app", path: "/srv/app", mode: "rw", tree_before: `sha256:${"0".repeat(64)}`, snapshot_id: "s-1" }).success).toBe(true);
  });
});
