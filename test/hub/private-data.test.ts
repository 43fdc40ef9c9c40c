/**
 * Secrets on the machine: the data directory is private (0700,
 * every file in it without group/other bits, PGlite's included, even when
 * the directory existed before with 0755/0666 files), a directory of another
 * user is refused naming it, and the local guest's one-time enrolment code
 * is never on its command line (/proc/PID/cmdline is readable by every
 * local user).
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, runInRunningHub, startHub, tempDir, type RunningHub } from "../support/hub-process";
import { waitFor } from "../guest/support";
import { freePort } from "../../tools/lib/postgres.mjs";

const hubs: RunningHub[] = [];
afterAll(async () => {
  await Promise.all(hubs.map((h) => h.stop()));
}, 30_000);

/** Everything under `dir` (not following symlinks) that group or others may read, write or enter. */
function exposed(dir: string): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    for (const name of fs.readdirSync(at)) {
      const file = path.join(at, name);
      const st = fs.lstatSync(file);
      if (st.isSymbolicLink()) continue;
      if ((st.mode & 0o077) !== 0) found.push(`${path.relative(dir, file)} ${(st.mode & 0o777).toString(8)}`);
      if (st.isDirectory()) walk(file);
    }
  };
  walk(dir);
  return found;
}

function countFiles(dir: string): number {
  let n = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) if (entry.isFile()) n++;
  return n;
}

describe("the data directory is private", () => {
  it("an existing data directory with 0755 dirs and 0666 files is made 0700 and nothing in it, PGlite's files included, is readable by others", async () => {
    const dataDir = path.join(tempDir("lh-private-"), "data");
    fs.mkdirSync(path.join(dataDir, "old"), { recursive: true, mode: 0o755 });
    fs.chmodSync(dataDir, 0o755);
    fs.writeFileSync(path.join(dataDir, "left-over.json"), "{}", { mode: 0o666 });
    fs.chmodSync(path.join(dataDir, "left-over.json"), 0o666);
    fs.writeFileSync(path.join(dataDir, "old", "notes"), "x");
    fs.chmodSync(path.join(dataDir, "old", "notes"), 0o644);
    const hub = await startHub({ LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_LOCAL_GUEST: "0" });
    hubs.push(hub);
    // A token makes the hub write to the database (PGlite creates and extends its files).
    expect((await runInRunningHub(dataDir, ["token", "create", "--name", "private", "--expires", "1d"])).code).toBe(0);
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(countFiles(path.join(dataDir, "pg"))).toBeGreaterThan(100);
    expect(exposed(dataDir)).toEqual([]);
    expect(await hub.stop()).toBe(0);
  }, 120_000);

  it("a data directory owned by another user is refused, naming it, and is left as it was", async () => {
    const dataDir = path.join(tempDir("lh-foreign-"), "data");
    fs.mkdirSync(dataDir, { mode: 0o755 });
    fs.chmodSync(dataDir, 0o755);
    fs.chownSync(dataDir, 65534, 65534);
    const r = await runCli(["start"], { LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_LOCAL_GUEST: "0", LEASEHOLD_PORT: String(await freePort()) });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`LEASEHOLD_DATA_DIR ${dataDir} is not usable: it is owned by uid 65534, not by this user`);
    const st = fs.statSync(dataDir);
    expect([st.uid, st.mode & 0o777]).toEqual([65534, 0o755]);
    expect(fs.readdirSync(dataDir)).toEqual([]);
  }, 60_000);
});

describe("the local guest's enrolment code", () => {
  it("is not on the local guest's command line, and the guest still enrols with it (through its stdin)", async () => {
    const hub = await startHub({});
    hubs.push(hub);
    const guestPid = await waitFor("the local guest process", async () => {
      for (const name of fs.readdirSync("/proc")) {
        if (!/^\d+$/.test(name)) continue;
        try {
          const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
          const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
          if (ppid === hub.process.pid && fs.readFileSync(`/proc/${name}/cmdline`, "utf8").includes("leasehold-guest")) return Number(name);
        } catch {
          // gone meanwhile
        }
      }
      return undefined;
    }, 20_000);
    const argv = fs.readFileSync(`/proc/${guestPid}/cmdline`, "utf8").split("\0");
    console.log(`local guest argv: ${argv.join(" ")}`);
    expect(argv).toContain("run");
    expect(argv).toContain("--enrol-stdin");
    expect(argv.join(" ")).not.toMatch(/lhe_/);
    expect(fs.readFileSync(`/proc/${guestPid}/environ`, "utf8")).not.toMatch(/lhe_/);
    const listing = await waitFor("local online", async () => {
      const r = await runInRunningHub(hub.dataDir, ["host", "list"]);
      return /local {2}online/.test(r.stdout) ? r.stdout : undefined;
    }, 60_000, 500);
    expect(listing).toMatch(/^local {2}online/m);
  }, 120_000);
});
