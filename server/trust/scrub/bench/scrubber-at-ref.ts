/**
 * The scrubber as it was at a git commit, loaded for the bench to measure the
 * current engine against in the same run, so no frozen copy of an old engine
 * lives in the tree. The commit's `agent-guest/scrub`, `server` and (when it
 * has one) `common` are extracted with `git archive` under
 * `.cache/bench-refs/<sha>/`: inside the checkout, so the old files' imports
 * resolve against this checkout's node_modules.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

export interface RefScrubber {
  push(b: Buffer): Buffer;
  end(options?: { partial?: boolean }): Buffer;
  report(): { count: number };
}
export type RefScrubberClass = new (options?: { dlp?: unknown }) => RefScrubber;

const root = path.resolve(import.meta.dirname, "..", "..", "..", "..");

function git(args: string[]): Buffer {
  return execFileSync("git", ["-C", root, ...args], { stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 30 });
}

export async function scrubberAtRef(ref: string): Promise<{ sha: string; Scrubber: RefScrubberClass }> {
  let sha: string;
  try {
    sha = git(["rev-parse", "--verify", `${ref}^{commit}`]).toString().trim();
  } catch {
    throw new Error(`the scrub bench compares against commit ${ref}, which this clone does not have (a shallow clone?): fetch it, or run the bench from a full clone`);
  }
  const dir = path.join(root, ".cache", "bench-refs", sha);
  // The scrubber lived in agent-guest/scrub until it joined the hub ⇄ guest contract in server/trust.
  const homes = [path.join(dir, "server", "trust", "scrub", "scrubber.ts"), path.join(dir, "agent-guest", "scrub", "scrubber.ts")];
  if (!homes.some((h) => fs.existsSync(h))) {
    const present = new Set(git(["ls-tree", "--name-only", sha]).toString().split("\n"));
    const trees = ["agent-guest", "server", "common"].filter((t) => present.has(t)).map((t) => (t === "agent-guest" ? "agent-guest/scrub" : t));
    // Extracted beside its final place and renamed into it, so an interrupted run never leaves half a tree that looks whole.
    const partial = `${dir}.partial-${process.pid}`;
    fs.rmSync(partial, { recursive: true, force: true });
    fs.mkdirSync(partial, { recursive: true });
    execFileSync("tar", ["-x", "-C", partial], { input: git(["archive", "--format=tar", sha, "--", ...trees]) });
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(partial, dir);
  }
  const entry = homes.find((h) => fs.existsSync(h));
  if (entry === undefined) throw new Error(`commit ${sha} has no scrubber at server/trust/scrub or agent-guest/scrub`);
  const loaded = (await import(pathToFileURL(entry).href)) as { Scrubber: RefScrubberClass };
  return { sha, Scrubber: loaded.Scrubber };
}
