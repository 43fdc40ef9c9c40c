// Cancelling a running launch (LaunchOptions.signal): the lease's cgroup is
// killed, every process in it ends, the lease is withdrawn and the result
// says what ran until then.
import { existsSync, readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch, leaseCgroupPrefix } from "../index";
import { basePolicy, makeWorkdir, removeWorkdir, setupNative } from "./helpers";
import { currentLayout } from "./layout";

let wd = "";
beforeAll(() => { setupNative(); wd = makeWorkdir(); });
afterAll(() => removeWorkdir(wd));

const layout = currentLayout();
function ownLeaseDirs(): string[] {
  const found: string[] = [];
  for (const d of layout.leaseParents) {
    if (existsSync(d)) for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory() && e.name.startsWith(leaseCgroupPrefix())) found.push(`${d}/${e.name}`);
  }
  return found;
}

/** Aborts once the workload has written `marker` to stdout (an event, not a sleep). */
function abortOnOutput(stop: AbortController): (p: { stdout_bytes: number }) => void {
  return (p) => { if (p.stdout_bytes > 0) stop.abort(); };
}

describe("cancelling a launch", () => {
  it("a running sleep 300 is killed: cancelled, SIGKILL, output so far kept, lease withdrawn", async () => {
    const stop = new AbortController();
    const started = Date.now();
    const r = await launch(
      { ...basePolicy(wd), argv: ["/bin/sh", "-c", "echo started; exec sleep 300"], timeout_ms: 120_000 },
      { signal: stop.signal, onProgress: abortOnOutput(stop), progressEveryMs: 10 },
    );
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(r.exit).toMatchObject({ code: null, signal: "SIGKILL", timed_out: false, cancelled: true });
    expect(r.stdout.toString()).toBe("started\n");
    expect(r.withdrawal).toEqual({ verified_empty: true, removed: true });
    expect(ownLeaseDirs()).toEqual([]);
  });

  it("a fork bomb held by pids_max is killed whole: nothing left in the lease", async () => {
    const stop = new AbortController();
    const r = await launch(
      { ...basePolicy(wd), argv: ["/bin/sh", "-c", "echo go; b() { b | b & }; b; sleep 300"], pids_max: 64, timeout_ms: 120_000 },
      { signal: stop.signal, onProgress: abortOnOutput(stop), progressEveryMs: 10 },
    );
    expect(r.exit).toMatchObject({ cancelled: true, timed_out: false });
    expect(r.withdrawal).toEqual({ verified_empty: true, removed: true });
    expect(ownLeaseDirs()).toEqual([]);
  });

  it("a signal that never aborts changes nothing: the result has no cancelled field", async () => {
    const r = await launch({ ...basePolicy(wd), argv: ["/bin/true"] }, { signal: new AbortController().signal });
    expect(r.exit.code).toBe(0);
    expect(r.exit).not.toHaveProperty("cancelled");
  });

  it("an abort before the launch still withdraws through the one path: cancelled, nothing left", async () => {
    const stop = new AbortController();
    stop.abort();
    const r = await launch({ ...basePolicy(wd), argv: ["/bin/sleep", "300"], timeout_ms: 120_000 }, { signal: stop.signal });
    expect(r.exit).toMatchObject({ cancelled: true, signal: "SIGKILL" });
    expect(ownLeaseDirs()).toEqual([]);
  });
});
