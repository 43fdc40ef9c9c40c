// Landlock proven on its own: cases where the mount would allow the access
// and only the Landlock ruleset refuses it (EACCES). Each is shown twice: in
// a normal lease (refused) and in the same lease with Landlock switched off
// (`landlock.required: false`, nothing else changed), where it succeeds — so
// the refusal is Landlock's, not the mount's or the file's.
import { execFileSync } from "node:child_process";
import { copyFileSync, chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROBE, TEST_ROOT, makeWorkdir, probe, removeWorkdir, setupNative } from "./helpers";

const noLandlock = { landlock: { required: false, scope: false } };
const out = (b: Buffer) => b.toString().trim();
let wd = "";
let extraBin = "";
beforeAll(() => {
  setupNative();
  wd = makeWorkdir();
  // A directory bound read-only (nosuid, nodev, but NOT noexec) holding a copy
  // of echo, and not listed in exec_allow.
  extraBin = join(TEST_ROOT, "extra-bin");
  mkdirSync(extraBin, { recursive: true });
  chmodSync(extraBin, 0o755);
  copyFileSync("/usr/bin/echo", join(extraBin, "echo-copy"));
  chmodSync(join(extraBin, "echo-copy"), 0o755);
});
afterAll(() => { removeWorkdir(wd); removeWorkdir(extraBin); });

describe("only Landlock stands between the workload and the file", () => {
  it("exec of a binary on an exec-permitted read-only bind outside exec_allow → EACCES", async () => {
    const bin = join(extraBin, "echo-copy");
    const extra = { ro_binds: [join(TEST_ROOT, "bin"), extraBin] };
    const r = await probe(wd, "exec_echo", bin, extra);
    expect(out(r.stdout)).toBe("ERR EACCES");
    // The bind is not noexec: the same lease without Landlock runs it.
    const ctl = await probe(wd, "exec_echo", bin, { ...extra, ...noLandlock });
    expect(ctl.enforcement.landlock_abi).toBeNull();
    expect(out(ctl.stdout)).toBe("EXECUTED");
  });
  it("exec of a copy staged in /tmp while /tmp is exec-mounted → EACCES", async () => {
    // /tmp is mounted without noexec whenever an exec_allow entry lies under
    // it (here the probe's own bin dir does); the staged copy is not under it.
    expect(join(TEST_ROOT, "bin").startsWith("/tmp/")).toBe(true);
    const r = await probe(wd, "copy_exec", "/tmp/echo-staged");
    expect(out(r.stdout)).toBe("ERR EACCES");
    const ctl = await probe(wd, "copy_exec", "/tmp/echo-staged", noLandlock);
    expect(out(ctl.stdout)).toBe("EXECUTED");
  });
  it("write to /proc/self/comm (read-write proc mount, owner may write) → EACCES", async () => {
    // /proc is listed read-only in the ruleset; the proc mount itself is not
    // read-only and the file belongs to the caller.
    const r = await probe(wd, "write_comm");
    expect(out(r.stdout)).toBe("ERR EACCES");
    const ctl = await probe(wd, "write_comm", "", noLandlock);
    expect(out(ctl.stdout)).toBe("OK");
    // and the kernel's own answer outside any sandbox
    expect(execFileSync(PROBE, ["write_comm"], { encoding: "utf8" }).trim()).toBe("OK");
  });
});
