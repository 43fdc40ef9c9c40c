import { describe, expect, it } from "vitest";
import { LeaseholdError } from "../errors";
import { hostPathsOf, parseHealthReport } from "./health";

const base = { tier: "B", kernel_features: [], probe: {}, workers: [], witness: { size: 0, failure: null }, accepting_jobs: true, guest_version: "1" };
const app = { label: "app", path: "/srv/app", mode: "rw", owner: { uid: 1000, gid: 1000 } };
const snapshot = { id: "snap-1", label: "app", created_at: "2026-12-06T07:00:00.000Z", bytes: 1, files: 1, tree_digest: `sha256:${"a".repeat(64)}` };

function refusal(body: unknown): LeaseholdError {
  try {
    parseHealthReport(body);
  } catch (error) {
    if (error instanceof LeaseholdError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("host paths in a guest's health report", () => {
  it("accepts a report with host paths and snapshots, and one without either", () => {
    expect(parseHealthReport({ ...base, host_paths: [app], snapshots: [snapshot] }).host_paths).toEqual([app]);
    expect(parseHealthReport(base).host_paths).toBeUndefined();
  });

  it.each([
    ["a relative path", { host_paths: [{ ...app, path: "srv/app" }] }],
    ["the root", { host_paths: [{ ...app, path: "/" }] }],
    ["a '..' segment", { host_paths: [{ ...app, path: "/srv/../etc" }] }],
    ["an upper-case label", { host_paths: [{ ...app, label: "App" }] }],
    ["a mode beyond ro/rw", { host_paths: [{ ...app, mode: "rwx" }] }],
    ["a label listed twice", { host_paths: [app, { ...app, path: "/srv/other" }] }],
    ["an unknown field", { host_paths: [{ ...app, follow_symlinks: true }] }],
    ["a snapshot with a bad digest", { snapshots: [{ ...snapshot, tree_digest: "md5:00" }] }],
    ["33 host paths", { host_paths: Array.from({ length: 33 }, (_, i) => ({ ...app, label: `l${i}`, path: `/srv/l${i}` })) }],
  ])("hostile: refuses %s (INVALID_ARGUMENT), so nothing of it is stored", (_what, extra) => {
    expect(refusal({ ...base, ...extra }).code).toBe("INVALID_ARGUMENT");
  });

  it("a stored row is re-read fail-closed: absent or malformed host paths read as none, malformed snapshots as none", () => {
    expect(hostPathsOf({ host_paths: [app], snapshots: [snapshot] })).toEqual({ host_paths: [app], snapshots: [snapshot] });
    expect(hostPathsOf({})).toEqual({ host_paths: null, snapshots: [] });
    expect(hostPathsOf(null)).toEqual({ host_paths: null, snapshots: [] });
    expect(hostPathsOf({ host_paths: [{ ...app, path: "relative" }], snapshots: "x" })).toEqual({ host_paths: null, snapshots: [] });
  });
});
