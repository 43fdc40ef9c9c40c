import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isLeaseholdError } from "../../server/trust";
import { Workspace } from "./index";

/**
 * The chown race, for real: a job that owns a directory inside the
 * workspace flips the entry the root guest has just created ("d") with a
 * symlink to a root-owned file outside the workspace, thousands of times a
 * second, with renameat2(RENAME_EXCHANGE), while the guest creates nested
 * directories under it (`fs_write p/d/e/f`) hundreds of times. A guest that
 * chowns by path follows the symlink and hands the outside file to the
 * attacker's uid. The test asserts that no file outside the workspace changed
 * owner, group, mode or inode.
 *
 * Needs root (the guest's chown and the attacker's uid) and gcc.
 */

const ATTACKER_UID = 54_321;
const ROUNDS = 400;

let base: string;
let ws: string;
let outside: string;
let sentinel: string;
let attackerBin: string;

type Identity = Record<string, { uid: number; gid: number; mode: number; ino: number }>;

function identity(paths: string[]): Identity {
  const out: Identity = {};
  for (const p of paths) {
    const st = fs.lstatSync(p);
    out[p] = { uid: st.uid, gid: st.gid, mode: st.mode, ino: st.ino };
  }
  return out;
}

function processState(pid: number): string {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
}

/** Stops the attacker and waits until the kernel says it is stopped, so cleaning up never races it. */
function pause(pid: number): void {
  process.kill(pid, "SIGSTOP");
  while (processState(pid) !== "T") {
    /* spin: the stop lands within a scheduler tick */
  }
}

/** Removes d and s as whatever they are now (attacker stopped): a symlink is unlinked, never followed. */
function clean(dir: string): void {
  for (const name of ["d", "s"]) {
    const p = path.join(dir, name);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory()) fs.rmSync(p, { recursive: true });
    else fs.unlinkSync(p);
  }
}

describe.skipIf(process.getuid?.() !== 0)("workspace: the root guest never chowns through a swapped-in symlink (RENAME_EXCHANGE race, real attacker process)", () => {
  beforeAll(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), "lh-ws-race-"));
    fs.chmodSync(base, 0o755);
    attackerBin = path.join(base, "exchange-attacker");
    execFileSync("gcc", ["-O2", "-Wall", "-o", attackerBin, path.join(import.meta.dirname, "test", "exchange-attacker.c")]);
    ws = path.join(base, "ws");
    fs.mkdirSync(ws, { mode: 0o755 });
    // The attacker owns p: it can rename entries in it, as an exclusive job can in a directory it made.
    fs.mkdirSync(path.join(ws, "p"), { mode: 0o755 });
    fs.chownSync(path.join(ws, "p"), ATTACKER_UID, ATTACKER_UID);
    outside = path.join(base, "outside");
    fs.mkdirSync(outside, { mode: 0o755 });
    sentinel = path.join(outside, "sentinel");
    fs.writeFileSync(sentinel, "root's file\n", { mode: 0o600 });
  });

  afterAll(() => {
    if (base) fs.rmSync(base, { recursive: true, force: true });
  });

  it(`${ROUNDS} nested creates under a directory flipped with a symlink: the outside file and its directory keep owner, group, mode and inode`, async () => {
    const watched = [sentinel, outside, base, ws];
    const before = identity(watched);
    const parent = path.join(ws, "p");
    const attacker = spawn(attackerBin, [parent, sentinel], { uid: ATTACKER_UID, gid: ATTACKER_UID, stdio: ["ignore", "pipe", "pipe"] });
    let report = "";
    attacker.stdout.on("data", (d: Buffer) => (report += d.toString()));
    // "close", not "exit": the attacker's report can still be in the pipe when "exit" fires (seen under load).
    const exited = new Promise<number | null>((resolve) => attacker.on("close", (code) => resolve(code)));
    const pid = attacker.pid!;
    const workspace = Workspace.open(ws);
    const outcomes = { written: 0, refused: 0, other: 0 };
    const otherErrors = new Set<string>();
    try {
      for (let i = 0; i < ROUNDS; i += 1) {
        pause(pid);
        clean(parent);
        process.kill(pid, "SIGCONT");
        try {
          workspace.write("p/d/e/f", Buffer.from(`round ${i}\n`));
          outcomes.written += 1;
        } catch (error) {
          if (isLeaseholdError(error)) outcomes.refused += 1;
          else {
            outcomes.other += 1;
            otherErrors.add(String((error as NodeJS.ErrnoException).code ?? error));
          }
        }
      }
    } finally {
      process.kill(pid, "SIGCONT");
      process.kill(pid, "SIGTERM");
    }
    expect(await exited).toBe(0);
    const [attempts, exchanged] = report.trim().split(" ").map(Number);
    console.log(`race: ${ROUNDS} rounds ${JSON.stringify(outcomes)} other=${[...otherErrors].join(",")}; attacker ${attempts} renameat2 calls, ${exchanged} exchanges`);
    const after = identity(watched);
    // The attacker really raced: thousands of successful exchanges during the run.
    expect(exchanged).toBeGreaterThan(1000);
    expect(after).toEqual(before);
    expect(fs.readFileSync(sentinel, "utf8")).toBe("root's file\n");
  }, 300_000);
});
