// The kernel exec allow-list, through the real launch(): an image not on the
// lease's list is refused (tier A: EPERM; tier B: SIGKILL before its first
// instruction) and recorded; what is on the list runs; the host is untouched.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LeaseholdError } from "../../server/trust";
import { checkEnforceable, compileExecAllowList, launch, MAX_EXEC_ALLOW_FILES, probeKernel, SandboxPolicy, type LaunchResult } from "../index";
import { basePolicy, makeWorkdir, removeWorkdir, TEST_ROOT } from "./helpers";
import { probeTier } from "./bpf-helpers";

const { status, skip } = probeTier();
const title = (t: string) => (skip ? `${t} — skipped: ${skip}` : t);
const LDSO = realpathSync("/lib64/ld-linux-x86-64.so.2");

let wd = "";
beforeAll(() => { wd = makeWorkdir(); });
afterAll(() => removeWorkdir(wd));

describe("BPF exec allow-list (launch, exec_kernel)", () => {
  it(title("this host enforces tier A or B (a tier C host fails here with the reason)"), () => {
    if (skip) return;
    expect(status.tier, status.detail).toMatch(/^[AB]$/);
    expect(status.object_sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it.skipIf(skip !== "")(title("an allowed binary runs; a file added to an exec_allow dir after the list was taken, and ld.so running an allowed file, are refused and recorded"), async () => {
    copyFileSync("/bin/true", join(wd, "early")); // on the list: it exists when the lease starts
    const script = [
      "/bin/true && echo allowed-ran",
      "/work/early; echo early=$?",
      "cp /bin/true /work/late && /work/late; echo late=$?",
      `${LDSO} /bin/true; echo ldso=$?`,
    ].join("\n");
    const r: LaunchResult = await launch({
      ...basePolicy(wd), argv: ["/bin/sh", "-c", script], exec_allow: ["/usr/bin", "/bin", "/work"], exec_kernel: true,
    });
    const out = r.stdout.toString();
    const refused = status.tier === "A" ? "126" : "137"; // A: execve EPERM (sh says 126); B: SIGKILL (128 + 9)
    expect(out).toContain("allowed-ran");
    expect(out).toContain("early=0");
    expect(out).toContain(`late=${refused}`);
    expect(out).toContain(`ldso=${refused}`);
    expect(r.bpf.enforced).toBe(true);
    expect(r.bpf.tier).toBe(status.tier);
    expect(r.bpf.denials_dropped).toBe(0);
    const late = statSync(join(wd, "late"));
    const ldso = statSync(LDSO);
    const execs = r.bpf.denials.filter((d) => d.kind === "exec");
    expect(execs).toHaveLength(2);
    expect(execs).toContainEqual(expect.objectContaining({ kind: "exec", dev: late.dev, ino: late.ino, comm: status.tier === "B" ? "late" : "sh" }));
    expect(execs).toContainEqual(expect.objectContaining({ kind: "exec", dev: ldso.dev, ino: ldso.ino }));
    expect(r.withdrawal).toEqual({ verified_empty: true, removed: true });
  });

  it.skipIf(skip !== "")(title("a process outside the lease runs the same refused file while the lease is live"), async () => {
    copyFileSync("/bin/true", join(wd, "outside"));
    const lease = launch({
      ...basePolicy(wd), argv: ["/bin/sh", "-c", "cp /bin/true /work/inside; while [ ! -e /work/stop ]; do sleep 0.02; done; /work/inside; echo inside=$?"],
      exec_allow: ["/usr/bin", "/bin", "/work"], exec_kernel: true, timeout_ms: 20_000,
    });
    for (let i = 0; i < 500 && !existsSync(join(wd, "inside")); i++) await new Promise((res) => setTimeout(res, 10));
    await new Promise((res) => setTimeout(res, 50));
    // Not on any list and the lease's programs are attached: the host is not a lease.
    expect(() => execFileSync(join(wd, "inside"))).not.toThrow();
    writeFileSync(join(wd, "stop"), "");
    const r = await lease;
    expect(r.stdout.toString()).toContain(status.tier === "A" ? "inside=126" : "inside=137");
    expect(r.bpf.denials.filter((d) => d.kind === "exec")).toHaveLength(1);
  });

  it.skipIf(skip !== "")(title("known hole kept visible: a #! script added after the list was taken runs on tier B (only its allowed interpreter is seen); tier A refuses it"), async () => {
    const script = "printf '#!/bin/sh\\necho script-ran\\n' > /work/late.sh && chmod 755 /work/late.sh && /work/late.sh; echo script=$?";
    const r = await launch({ ...basePolicy(wd), argv: ["/bin/sh", "-c", script], exec_allow: ["/usr/bin", "/bin", "/work"], exec_kernel: true });
    const out = r.stdout.toString();
    if (status.tier === "B") {
      expect(out).toContain("script-ran");
      expect(out).toContain("script=0");
      expect(r.bpf.denials).toEqual([]);
    } else {
      expect(out).toContain("script=126");
      expect(r.bpf.denials).toContainEqual(expect.objectContaining({ kind: "exec", ino: statSync(join(wd, "late.sh")).ino }));
    }
  });

  it("a policy that needs BPF is refused UNENFORCEABLE on a tier C host, before anything runs", () => {
    const tierC = () => ({ tier: "C" as const, object_sha256: null, detail: "no BPF here (test)" });
    for (const extra of [{ exec_kernel: true }, { network: { egress: ["10.0.0.0/8:443"] } }]) {
      const policy = SandboxPolicy.parse({ ...basePolicy(wd), ...extra });
      let err: unknown;
      try { checkEnforceable(policy, probeKernel(), tierC); } catch (e) { err = e; }
      expect(err).toBeInstanceOf(LeaseholdError);
      expect((err as LeaseholdError).code).toBe("UNENFORCEABLE");
      expect((err as LeaseholdError).message).toMatch(/tier C: no BPF here/);
    }
    // Without egress or exec_kernel the BPF tier is not asked for.
    expect(() => checkEnforceable(SandboxPolicy.parse(basePolicy(wd)), probeKernel(), tierC)).not.toThrow();
  });

  it("egress rules must be canonical CIDR:port (INVALID_ARGUMENT otherwise)", async () => {
    await expect(launch({ ...basePolicy(wd), network: { egress: ["10.0.0.1/8:443"] } })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });

  it(`an exec_allow tree of more than ${MAX_EXEC_ALLOW_FILES} files is UNENFORCEABLE`, () => {
    const big = join(TEST_ROOT, `bpf-many-${process.pid}`); // bound read-only at its own path
    mkdirSync(big, { recursive: true });
    try {
      for (let i = 0; i <= MAX_EXEC_ALLOW_FILES; i++) writeFileSync(join(big, String(i)), "");
      const policy = SandboxPolicy.parse({ ...basePolicy(wd), ro_binds: [big], exec_allow: [big], exec_kernel: true });
      expect(() => compileExecAllowList(policy)).toThrow(/more than 65536 files/);
      rmSync(join(big, "0"));
      expect(compileExecAllowList(policy)).toHaveLength(MAX_EXEC_ALLOW_FILES);
    } finally { rmSync(big, { recursive: true, force: true }); }
  });
});
