import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildNative } from "../../native/build.mjs";
import { testRunnerContext } from "../../test/support/runner-context";
import { testShellPolicy, testVerifiedJob } from "../../test/support/shell-policy";
import { BUNDLE_SCHEMA } from "../../server/trust/bundle";
import { installBundle } from "../workers/bundle";
import { mountAt, mountWorkspace, unmountWorkspace, type MountedWorkspace } from "../workspace/index";
import { makeJobDirectory, sweepJobDirectories, type ArtifactRef, type FetchArtifact } from "./bundle-run";
import { runJob, type RunnerContext } from "./runner";
import type { VerifiedJob } from "./verify-job";

/**
 * Guest-owned paths no workload can reach or name, and a full workspace
 * stated as such — with real sandbox launches on a real bounded workspace
 * (an 8 MiB / 256-inode ext4 image, needs root):
 *
 * - a job holding the exclusive lease (it owns the workspace root) renames
 *   `.leasehold-jobs` aside, plants its own directory there, then a symlink,
 *   then a file:
 *   a bundle job (apk_inspect) for another caller still runs each time, and
 *   nothing of it is made in the workspace;
 * - the guest's private jobs directory itself replaced by a symlink, a file,
 *   a directory of another owner or a wider mode is re-created (the old
 *   entry set aside, never followed), and the job runs;
 * - a workspace filled to the last byte, then to the last inode, by a
 *   sandboxed job: fs_write is WORKSPACE_FULL with the file system's limits
 *   and use, and apk_inspect still runs.
 */

const RESULT_SCHEMA = "leasehold.apk-static.result/1";
const WORKER = `import fs from "node:fs";
import { createHash } from "node:crypto";
const [operation, file] = process.argv.slice(-2);
const bytes = fs.readFileSync(file);
console.log(JSON.stringify({ schema: "${RESULT_SCHEMA}", operation, artifact: { sha256: createHash("sha256").update(bytes).digest("hex"), bytes: bytes.length }, facts: [], limitations: [] }));
`;

const MiB = 1024 * 1024;
/** The guest's private jobs directory (bundle-run.ts `jobsPath`), spelled out so this file also runs against a guest without it. */
const jobsPath = (state: string): string => path.join(state, "jobs");
let dataDir: string;
let stateDir: string;
let ws: string;
let mounted: MountedWorkspace | undefined;
let digest: string;
let ctx: RunnerContext;

const content = Buffer.from("PK\x03\x04 an archive another caller uploaded");
const ref: ArtifactRef = { sha256: createHash("sha256").update(content).digest("hex"), bytes: content.length };
const fetchArtifact: FetchArtifact = async (_jobId, _ref, fd) => {
  fs.writeSync(fd, content, 0, content.length, 0);
};

function inspectJob(): VerifiedJob {
  return testVerifiedJob({
    job_id: `job-${Math.random().toString(36).slice(2)}`,
    operation: "apk_inspect",
    capability: { id: "apk-static", version: "1.0.0", worker_digest: digest },
    arguments: { host: "local", artifact: ref },
    policy: { ...testShellPolicy(), capability: "apk-static", operation: "apk_inspect", memory_bytes: 512 << 20 },
  });
}

/** A shell job under the exclusive lease: it owns the workspace root for the run. */
function writerJob(command: string): VerifiedJob {
  return testVerifiedJob({ mutating: true, writesWorkspace: true, arguments: { host: "local", command, env: {}, stdin: "" } });
}

function fsWriteJob(file: string, text: string): VerifiedJob {
  return testVerifiedJob({
    operation: "fs_write",
    capability: { id: "workspace", version: "1.0.0" },
    mutating: true,
    writesWorkspace: true,
    arguments: { host: "local", path: file, content: text },
  });
}

async function inspectRuns(): Promise<void> {
  const out = await runJob(inspectJob(), ctx);
  expect(out.error, JSON.stringify(out.error)).toBeNull();
  expect(out.kind).toBe("ran");
  expect(out.structured?.["artifact"]).toEqual(ref);
}

async function shell(command: string): Promise<string> {
  const out = await runJob(writerJob(command), ctx);
  expect(out.kind, JSON.stringify(out.error)).toBe("ran");
  expect(out.evidence.envelope.exit?.code, out.streams.stderr.toString()).toBe(0);
  return out.streams.stdout.toString();
}

describe.skipIf(process.getuid?.() !== 0)("guest-owned paths and a full workspace (real sandbox, bounded workspace; needs root)", () => {
  beforeAll(() => {
    buildNative({ quiet: true });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "lh-guest-paths-"));
    fs.chmodSync(dataDir, 0o755);
    stateDir = path.join(dataDir, "guest");
    fs.mkdirSync(stateDir, { mode: 0o700 });
    ws = path.join(dataDir, "workspace");
    fs.mkdirSync(ws, { mode: 0o755 });
    mounted = mountWorkspace({ root: ws, stateDir, maxBytes: 8 * MiB, maxInodes: 256 });
    const src = path.join(dataDir, "src");
    fs.mkdirSync(src);
    fs.writeFileSync(path.join(src, "bundle.json"), JSON.stringify({ schema: BUNDLE_SCHEMA, capability: "apk-static", version: "1.0.0", runtime: "node", entry: "worker.mjs" }));
    fs.writeFileSync(path.join(src, "worker.mjs"), WORKER);
    const store = path.join(stateDir, "workers");
    digest = installBundle(src, store).digest;
    ctx = testRunnerContext(ws, { workerStore: store, installedBundles: { "apk-static": digest }, jobsDir: jobsPath(stateDir), fetchArtifact });
  }, 120_000);

  // Each case starts from an empty workspace (a lease's files belong to its own uid; root clears them).
  afterEach(() => {
    for (const name of fs.readdirSync(ws)) fs.rmSync(path.join(ws, name), { recursive: true, force: true });
  });

  afterAll(() => {
    if (mounted && mountAt(ws) !== null) unmountWorkspace(mounted);
    if (mountAt(ws) === null) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it("a write-capable job moves .leasehold-jobs aside, plants its own directory, then a symlink, then a file: apk_inspect for another caller runs every time and leaves nothing in the workspace", async () => {
    await inspectRuns();
    // Whatever a guest kept in the workspace, the job can move it and plant its own in its place.
    expect(await shell("mkdir -p .leasehold-jobs && mv .leasehold-jobs moved-aside && mkdir .leasehold-jobs && chmod 700 .leasehold-jobs && stat -c '%u %a' .leasehold-jobs")).toMatch(/^\d+ 700\n$/);
    await inspectRuns();
    expect(await shell("rm -rf .leasehold-jobs moved-aside && ln -s /etc .leasehold-jobs && readlink .leasehold-jobs")).toBe("/etc\n");
    await inspectRuns();
    expect(await shell("rm .leasehold-jobs && echo planted > .leasehold-jobs && cat .leasehold-jobs")).toBe("planted\n");
    await inspectRuns();
    await shell("rm -f .leasehold-jobs");
    // The guest made nothing in the workspace; its job directories are in its own state directory, and gone.
    expect(fs.readdirSync(ws)).toEqual([]);
    expect(fs.readdirSync(jobsPath(stateDir))).toEqual([]);
    expect(fs.statSync(jobsPath(stateDir)).mode & 0o777).toBe(0o700);
  }, 120_000);

  it("the private jobs directory replaced by a symlink, a file, another owner's directory or a 0777 one is set aside (never followed) and re-created; the job runs", async () => {
    const jobs = jobsPath(stateDir);
    const target = path.join(dataDir, "link-target");
    fs.mkdirSync(target, { mode: 0o755 });
    const tampered: Array<[string, () => void]> = [
      ["symlink", () => fs.symlinkSync(target, jobs)],
      ["file", () => fs.writeFileSync(jobs, "not a directory")],
      ["other owner", () => { fs.mkdirSync(jobs, { mode: 0o700 }); fs.chownSync(jobs, 12345, 12345); }],
      ["0777", () => { fs.mkdirSync(jobs); fs.chmodSync(jobs, 0o777); }],
    ];
    for (const [what, tamper] of tampered) {
      fs.rmSync(jobs, { recursive: true, force: true });
      tamper();
      await inspectRuns();
      const st = fs.lstatSync(jobs);
      expect({ what, dir: st.isDirectory(), uid: st.uid, mode: st.mode & 0o777 }).toEqual({ what, dir: true, uid: 0, mode: 0o700 });
      expect(fs.readdirSync(target)).toEqual([]);
    }
    const aside = fs.readdirSync(stateDir).filter((n) => n.startsWith("jobs.aside-"));
    expect(aside).toHaveLength(tampered.length);
    for (const name of aside) fs.rmSync(path.join(stateDir, name), { recursive: true, force: true });
  }, 120_000);

  it("job directories a killed guest left in the private directory are swept at start; anything else there is left alone", () => {
    const left = makeJobDirectory(jobsPath(stateDir));
    fs.writeSync(left.artifactFd, Buffer.from("left over"));
    fs.closeSync(left.artifactFd);
    const foreign = path.join(jobsPath(stateDir), "not-a-job");
    fs.mkdirSync(foreign);
    expect(sweepJobDirectories(jobsPath(stateDir))).toBe(1);
    expect(fs.readdirSync(jobsPath(stateDir))).toEqual(["not-a-job"]);
    fs.rmdirSync(foreign);
  });

  it("a workspace full to the last byte: fs_write is WORKSPACE_FULL with the limits and use, apk_inspect still runs", async () => {
    // Each dd stops at ENOSPC, the smaller blocks take what delayed allocation held back; bounded so an
    // unbounded workspace fails the test instead of filling the host.
    await shell("for b in 1048576:64 65536:64 4096:256 1024:256; do dd if=/dev/zero of=fill-${b%:*} bs=${b%:*} count=${b#*:} 2>/dev/null; sync; done; true");
    const out = await runJob(fsWriteJob("note.txt", "x".repeat(64 * 1024)), ctx);
    expect(out.kind).toBe("refused");
    expect(out.error?.code).toBe("WORKSPACE_FULL");
    expect(out.error?.message).toMatch(/workspace is full/);
    const d = out.error?.details as Record<string, number>;
    expect(d["bytes_total"]).toBeGreaterThan(4 * MiB);
    expect(d["bytes_total"]).toBeLessThanOrEqual(8 * MiB);
    expect(d["bytes_free"]).toBeLessThan(64 * 1024);
    expect(d["inodes_total"]).toBeGreaterThan(200);
    expect(d["inodes_total"]).toBeLessThanOrEqual(256);
    expect(d).toHaveProperty("inodes_free");
    await inspectRuns();
  }, 120_000);

  it("a workspace out of inodes: fs_write is WORKSPACE_FULL naming the inodes, apk_inspect still runs", async () => {
    await shell("mkdir many && cd many && i=0; while touch f$i 2>/dev/null; do i=$((i+1)); [ $i -gt 2000 ] && break; done; echo $i");
    const out = await runJob(fsWriteJob("note.txt", "small"), ctx);
    expect(out.kind).toBe("refused");
    expect(out.error?.code).toBe("WORKSPACE_FULL");
    const d = out.error?.details as Record<string, number>;
    expect(d["inodes_free"]).toBe(0);
    expect(out.error?.message).toMatch(/inodes/);
    await inspectRuns();
    fs.rmSync(path.join(ws, "many"), { recursive: true, force: true });
    const after = await runJob(fsWriteJob("note.txt", "small"), ctx);
    expect(after.error).toBeNull();
  }, 120_000);
});
