// Setuid/setgid bits never kept: inside a lease with a read-write workdir,
// every call that sets a mode (chmod family, and the create calls whose mode
// argument carries S_ISUID/S_ISGID) is refused with EPERM by seccomp, openat2
// (mode in memory seccomp cannot read) gets ENOSYS, and afterwards no file in
// the workdir has either bit when the host stats it. The same calls made by
// root directly on the host do set the bits (checked first on a scratch dir),
// so the refusal is the sandbox's.
import { execFileSync } from "node:child_process";
import { lstatSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launch } from "../index";
import { PROBE, basePolicy, makeWorkdir, removeWorkdir, setupNative } from "./helpers";

const S_ISUID = 0o4000, S_ISGID = 0o2000;
let wd = "";
let hostDir = "";
beforeAll(() => { setupNative(); wd = makeWorkdir(); hostDir = makeWorkdir(); });
afterAll(() => { removeWorkdir(wd); removeWorkdir(hostDir); });

// Each lease has its own uid, so the file or directory a chmod acts on is
// made in the same lease (owned by it): the kernel would let the owner set
// the bits; only the filter stands in the way.
async function inLease(op: string, path: string, mode: string): Promise<string> {
  const script = `touch /work/f-$1 && mkdir /work/d-$1 && exec "$@"`;
  const tag = `${op}-${mode}`;
  const p = path.replace("/work/f", `/work/f-${tag}`).replace("/work/d", `/work/d-${tag}`);
  const r = await launch({ ...basePolicy(wd), argv: ["/bin/sh", "-c", script.replaceAll("$1", tag), "sh", PROBE, op, p, mode] });
  expect(r.stderr.toString()).toBe("");
  return r.stdout.toString().trim();
}
function specialBits(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    const st = lstatSync(join(dir, e));
    if (st.mode & (S_ISUID | S_ISGID)) out.push(`${e} ${(st.mode & 0o7777).toString(8)}`);
  }
  return out;
}

// [op, path inside the lease, mode, expected inside]; files exist beforehand where the op needs one.
const cases: [string, string, string, string][] = [
  ["chmod_mode", "/work/f", "4755", "ERR EPERM"],
  ["chmod_mode", "/work/f", "2755", "ERR EPERM"],
  ["chmod_mode", "/work/f", "6755", "ERR EPERM"],
  ["chmod_mode", "/work/d", "3777", "ERR EPERM"],
  ["fchmod_mode", "/work/f", "4755", "ERR EPERM"],
  ["fchmodat_mode", "/work/f", "2755", "ERR EPERM"],
  ["fchmodat2_mode", "/work/f", "6755", "ERR EPERM"],
  ["open_mode", "/work/n1", "4755", "ERR EPERM"],
  ["openat_mode", "/work/n2", "2755", "ERR EPERM"],
  ["creat_mode", "/work/n3", "6755", "ERR EPERM"],
  ["tmpfile_mode", "/work", "4755", "ERR EPERM"],
  ["mkdir_mode", "/work/n4", "2775", "ERR EPERM"],
  ["mkdirat_mode", "/work/n5", "3777", "ERR EPERM"],
  ["mknod_mode", "/work/n6", "4755", "ERR EPERM"],
  ["mknodat_mode", "/work/n7", "2755", "ERR EPERM"],
  ["openat2_mode", "/work/n8", "4755", "ERR ENOSYS"],
];

describe("setuid/setgid bits in a read-write workdir", () => {
  it("root on the host can set each bit with the same calls (the kernel allows it)", () => {
    writeFileSync(join(hostDir, "f"), "x");
    mkdirSync(join(hostDir, "d"));
    for (const [op, path, mode] of cases) {
      const p = path.replace(/^\/work/, hostDir);
      expect(execFileSync(PROBE, [op, p, mode], { encoding: "utf8" }).trim()).toBe("OK");
    }
    expect(specialBits(hostDir).length).toBeGreaterThan(0);
  });
  it.each(cases)("%s %s %s → %s", async (op, path, mode, expected) => {
    expect(await inLease(op, path, mode)).toBe(expected);
  });
  it("ordinary modes still work: chmod 0755, open(O_CREAT, 0644), mkdir 0755", async () => {
    expect(await inLease("chmod_mode", "/work/f", "755")).toBe("OK");
    expect(await inLease("chmod_mode", "/work/d", "1777")).toBe("OK"); // sticky is not a privilege
    expect(await inLease("open_mode", "/work/plain", "644")).toBe("OK");
    expect(await inLease("mkdir_mode", "/work/plaindir", "755")).toBe("OK");
  });
  it("afterwards the host sees no S_ISUID/S_ISGID bit on anything in the workdir", () => {
    expect(specialBits(wd)).toEqual([]);
  });
});
