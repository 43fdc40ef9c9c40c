import { createHash, generateKeyPairSync } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildNative } from "../../native/build.mjs";
import { TEST_ROOT } from "../../native/test/helpers";
import { testShellPolicy, testVerifiedJob } from "../../test/support/shell-policy";
import { verifyEvidence } from "../../server/trust/evidence/index";
import { BUNDLE_SCHEMA } from "../../server/trust/bundle";
import { installBundle, storeEntryName } from "../workers/bundle";
import { Workspace } from "../workspace/index";
import { jobsPath, type ArtifactRef, type FetchArtifact } from "./bundle-run";
import { runJob, type RunnerContext } from "./runner";
import type { VerifiedJob } from "./verify-job";
import { testRunnerContext } from "../../test/support/runner-context";

/**
 * A bundle worker through the runner with a real sandbox launch (needs root):
 * the verified bundle's bytes go in on stdin (a bundle of a few hundred KB),
 * the artifact is a read-only file at /work/artifact in a fresh job
 * directory that is removed afterwards, the worker's JSON is the result, and
 * the evidence names the verified worker digest and the input artifact.
 * Refused before launch: a tampered bundle, a job expecting another digest,
 * an artifact whose bytes do not match the signed reference.
 */

const RESULT_SCHEMA = "leasehold.apk-static.result/1";
// A small worker in the contract's shape: last two argv entries, one JSON document, exit 3 on refusal.
// The padding makes the bundle a few hundred KB, the size class of a real worker, to exercise the launcher's stdin.
const WORKER = `import fs from "node:fs";
import { createHash } from "node:crypto";
const [operation, file] = process.argv.slice(-2);
const bytes = fs.readFileSync(file);
let write_probe = "written";
try { fs.writeFileSync("/work/planted", "x"); } catch (e) { write_probe = e.code; }
let artifact_write = "written";
try { fs.appendFileSync(file, "x"); } catch (e) { artifact_write = e.code; }
if (bytes.subarray(0, 3).toString() === "BAD") {
  console.log(JSON.stringify({ schema: "${RESULT_SCHEMA}", error: { code: "INVALID_ARGUMENT", message: "not a ZIP archive (no end of central directory)" } }));
  process.exit(3);
}
if (bytes.subarray(0, 5).toString() === "CRASH") throw new Error("worker crashed on purpose");
// "LIE": the worker reports other bytes than it was given (what a swapped file would look like).
const read = bytes.subarray(0, 3).toString() === "LIE" ? Buffer.from("other bytes") : bytes;
console.log(JSON.stringify({ schema: "${RESULT_SCHEMA}", operation, artifact: { sha256: createHash("sha256").update(read).digest("hex"), bytes: read.length },
  facts: [{ id: "probe.argv_tail", value: [operation, file], state: "observed", source: "argv" }, { id: "probe.workdir_write", value: write_probe, state: "observed", source: "fs" }, { id: "probe.artifact_write", value: artifact_write, state: "observed", source: "fs" }],
  limitations: [] }));
/* ${"p".repeat(300 * 1024)} */
`;

let base: string;
let ws: string;
let store: string;
let jobs: string;
let digest: string;
let ctx: RunnerContext;
const fetched: string[] = [];

const fileFetcher =
  (content: Buffer): FetchArtifact =>
  async (jobId, _ref, fd) => {
    fetched.push(jobId);
    fs.writeSync(fd, content, 0, content.length, 0);
  };

function refOf(content: Buffer): ArtifactRef {
  return { sha256: createHash("sha256").update(content).digest("hex"), bytes: content.length };
}

function bundleJob(ref: ArtifactRef, over: Partial<VerifiedJob> = {}): VerifiedJob {
  return testVerifiedJob({
    job_id: `job-${fetched.length}-${Math.random().toString(36).slice(2)}`,
    operation: "apk_inspect",
    capability: { id: "apk-static", version: "1.0.0", worker_digest: digest },
    arguments: { host: "local", artifact: ref },
    policy: { ...testShellPolicy(), capability: "apk-static", operation: "apk_inspect", memory_bytes: 512 << 20 },
    ...over,
  });
}

function writeBundle(dir: string, worker: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "bundle.json"), JSON.stringify({ schema: BUNDLE_SCHEMA, capability: "apk-static", version: "1.0.0", runtime: "node", entry: "worker.mjs" }));
  fs.writeFileSync(path.join(dir, "worker.mjs"), worker);
}

beforeAll(() => {
  expect(process.getuid?.()).toBe(0); // the sandbox launcher needs root; this file is not skipped without it
  buildNative({ quiet: true });
  fs.mkdirSync(TEST_ROOT, { recursive: true });
  fs.chmodSync(TEST_ROOT, 0o755);
  base = fs.mkdtempSync(path.join(TEST_ROOT, "runner-bundle-"));
  fs.chmodSync(base, 0o755);
  ws = path.join(base, "ws");
  fs.mkdirSync(ws, { mode: 0o755 });
  writeBundle(path.join(base, "src"), WORKER);
  store = path.join(base, "store");
  digest = installBundle(path.join(base, "src"), store).digest;
  const state = path.join(base, "state");
  fs.mkdirSync(state, { mode: 0o700 });
  jobs = jobsPath(state);
  ctx = testRunnerContext(ws, { workerStore: store, installedBundles: { "apk-static": digest }, jobsDir: jobs });
});

afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

const jobDirsLeft = (): string[] => (fs.existsSync(jobs) ? fs.readdirSync(jobs) : []);

describe("runner: bundle worker", () => {
  it("runs the verified bundle on stdin against a read-only /work/artifact; the worker's JSON is the result; evidence names the bundle digest and the input", async () => {
    expect(fs.statSync(path.join(store, storeEntryName(digest), "worker.mjs")).size).toBeGreaterThan(300 * 1024);
    const content = Buffer.from("PK\x03\x04 pretend archive bytes");
    let launched = 0;
    const out = await runJob(bundleJob(refOf(content)), { ...ctx, fetchArtifact: fileFetcher(content) }, { onLaunch: () => (launched += 1) });
    expect(out.error).toBeNull();
    expect(out.kind).toBe("ran");
    expect(launched).toBe(1);
    expect(out.structured).toEqual({
      schema: RESULT_SCHEMA,
      operation: "apk_inspect",
      artifact: refOf(content),
      facts: [
        { id: "probe.argv_tail", value: ["apk_inspect", "/work/artifact"], state: "observed", source: "argv" },
        // The job directory is a read-only bind (EROFS) and the artifact root's 0444 (EACCES, checked before the mount's flag): the worker can change neither.
        { id: "probe.workdir_write", value: "EROFS", state: "observed", source: "fs" },
        { id: "probe.artifact_write", value: "EACCES", state: "observed", source: "fs" },
      ],
      limitations: [],
    });
    expect(JSON.parse(out.streams.stdout.toString())).toEqual(out.structured);
    const verified = verifyEvidence(out.evidence, generateKeyPairSync("ed25519").publicKey);
    expect(verified.ok).toBe(false); // signed by the host key, not any key
    const envelope = out.evidence.envelope;
    expect(envelope.producer).toEqual({ capability: "apk-static", version: "1.0.0", worker_digest: digest });
    expect(envelope.artifacts.find((a) => a.name === "input")).toEqual({ name: "input", ...refOf(content), truncated: false });
    expect(envelope.artifacts.find((a) => a.name === "stdout")?.sha256).toBe(createHash("sha256").update(out.streams.stdout).digest("hex"));
    expect(envelope.exit?.code).toBe(0);
    expect(envelope.enforcement?.namespaces).toEqual(expect.arrayContaining(["net", "mnt", "user", "pid"]));
    expect(jobDirsLeft()).toEqual([]);
    expect(fs.statSync(jobs).mode & 0o777).toBe(0o700);
    // Nothing of the job is in the workspace: its directory is in the guest's private state directory.
    expect(fs.readdirSync(ws)).toEqual([]);
  });

  it("a worker that refuses its input (exit 3) makes the job's error INVALID_ARGUMENT with the worker's message; a crash is a failure with the stderr tail", async () => {
    const bad = Buffer.from("BAD input");
    const refused = await runJob(bundleJob(refOf(bad)), { ...ctx, fetchArtifact: fileFetcher(bad) });
    expect(refused.kind).toBe("refused");
    expect(refused.error).toMatchObject({ code: "INVALID_ARGUMENT", message: "not a ZIP archive (no end of central directory)" });
    expect(refused.evidence.envelope.exit?.code).toBe(3);
    expect(refused.evidence.envelope.producer.worker_digest).toBe(digest);
    const crash = Buffer.from("CRASH now");
    const crashed = await runJob(bundleJob(refOf(crash)), { ...ctx, fetchArtifact: fileFetcher(crash) });
    expect(crashed.kind).toBe("refused");
    expect(crashed.error?.code).toBe("INTERNAL");
    expect(crashed.error?.message).toMatch(/the worker did not print one JSON document \(exit 1, 0 bytes on stdout\); stderr: .*worker crashed on purpose/s);
    expect(jobDirsLeft()).toEqual([]);
  });

  it("a worker result about other bytes than the verified artifact is withheld (INTERNAL), never passed on as that artifact's", async () => {
    const content = Buffer.from("LIE about the input");
    const out = await runJob(bundleJob(refOf(content)), { ...ctx, fetchArtifact: fileFetcher(content) });
    expect(out.kind).toBe("refused");
    expect(out.structured).toBeNull();
    expect(out.error?.code).toBe("INTERNAL");
    expect(out.error?.message).toContain(`not the verified artifact ${refOf(content).sha256}`);
    expect(jobDirsLeft()).toEqual([]);
  });

  it("a host whose node lies outside the capability's exec_allow is refused UNENFORCEABLE before anything is fetched or launched", async () => {
    const content = Buffer.from("PK\x03\x04 pretend archive bytes");
    const before = fetched.length;
    const out = await runJob(bundleJob(refOf(content)), { ...ctx, nodePath: "/opt/node/bin/node", fetchArtifact: fileFetcher(content) });
    expect(out.kind).toBe("refused");
    expect(out.error?.code).toBe("UNENFORCEABLE");
    expect(out.error?.message).toContain("/opt/node/bin/node");
    expect(fetched.length).toBe(before);
    expect(jobDirsLeft()).toEqual([]);
  });

  it("a tampered bundle in the store is refused with WORKER_DIGEST_MISMATCH: no fetch, no launch", async () => {
    const tamperedStore = path.join(base, "store-tampered");
    const { digest: d } = installBundle(path.join(base, "src"), tamperedStore);
    const entry = path.join(tamperedStore, storeEntryName(d));
    fs.chmodSync(entry, 0o755);
    fs.writeFileSync(path.join(entry, ".w"), WORKER.replace("write_probe", "write_probe2"), { mode: 0o444 });
    fs.renameSync(path.join(entry, ".w"), path.join(entry, "worker.mjs"));
    fs.chmodSync(entry, 0o555);
    const content = Buffer.from("PK");
    let launched = false;
    const before = fetched.length;
    const out = await runJob(bundleJob(refOf(content)), { ...ctx, workerStore: tamperedStore, fetchArtifact: fileFetcher(content) }, { onLaunch: () => (launched = true) });
    expect(out.kind).toBe("refused");
    expect(out.error?.code).toBe("WORKER_DIGEST_MISMATCH");
    expect(launched).toBe(false);
    expect(fetched.length).toBe(before);
    expect(out.evidence.envelope.exit).toBeUndefined();
  });

  it("a job expecting another digest than the one installed is refused with WORKER_DIGEST_MISMATCH naming both", async () => {
    const other = `sha256:${"e".repeat(64)}`;
    const content = Buffer.from("PK");
    let launched = false;
    const out = await runJob(bundleJob(refOf(content), { capability: { id: "apk-static", version: "1.0.0", worker_digest: other } }), { ...ctx, fetchArtifact: fileFetcher(content) }, { onLaunch: () => (launched = true) });
    expect(out.error?.code).toBe("WORKER_DIGEST_MISMATCH");
    expect(out.error?.details).toEqual({ expected: other, installed: digest });
    expect(launched).toBe(false);
    const unpinned = await runJob(bundleJob(refOf(content), { capability: { id: "apk-static", version: "1.0.0" } }), { ...ctx, fetchArtifact: fileFetcher(content) }, { onLaunch: () => (launched = true) });
    expect(unpinned.error?.code).toBe("POLICY_REFUSED");
    expect(launched).toBe(false);
  });

  it("an artifact whose fetched bytes do not match the signed sha256 (or size) is refused before launch, and its job directory removed", async () => {
    const signed = Buffer.from("PK the approved bytes");
    const served = Buffer.from("PK other bytes!!!!!!!");
    let launched = false;
    const out = await runJob(bundleJob(refOf(signed)), { ...ctx, fetchArtifact: fileFetcher(served) }, { onLaunch: () => (launched = true) });
    expect(out.kind).toBe("refused");
    expect(out.error?.code).toBe("INVALID_ARGUMENT");
    expect(out.error?.message).toContain(refOf(served).sha256);
    const longer = await runJob(bundleJob(refOf(signed)), { ...ctx, fetchArtifact: fileFetcher(Buffer.concat([signed, Buffer.from("+")])) }, { onLaunch: () => (launched = true) });
    expect(longer.error?.code).toBe("INVALID_ARGUMENT");
    expect(launched).toBe(false);
    expect(jobDirsLeft()).toEqual([]);
  });

  it("the job directory is outside the workspace while the job runs: the workspace holds nothing of it, and the guest's own workspace operations cannot name it", async () => {
    const content = Buffer.from("PK the bytes that were approved");
    const seen: { ws: string[]; jobs: string[]; list: string[] }[] = [];
    const watching: FetchArtifact = async (jobId, ref, fd) => {
      await fileFetcher(content)(jobId, ref, fd);
      const listing = Workspace.open(ws).list("", {});
      seen.push({ ws: fs.readdirSync(ws), jobs: jobDirsLeft(), list: listing.entries.map((e) => e.name) });
    };
    const out = await runJob(bundleJob(refOf(content)), { ...ctx, fetchArtifact: watching });
    expect(seen).toHaveLength(1);
    expect(seen[0]?.ws).toEqual([]);
    expect(seen[0]?.list).toEqual([]);
    expect(seen[0]?.jobs).toHaveLength(1);
    expect(seen[0]?.jobs[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(out.kind).toBe("ran");
    expect(out.structured?.["artifact"]).toEqual(refOf(content));
  });

  it("a guest without a private jobs directory refuses a bundle job UNENFORCEABLE before fetching anything", async () => {
    const content = Buffer.from("PK");
    const before = fetched.length;
    const { jobsDir: _unused, ...without } = ctx;
    const out = await runJob(bundleJob(refOf(content)), { ...without, fetchArtifact: fileFetcher(content) });
    expect(out.error?.code).toBe("UNENFORCEABLE");
    expect(fetched.length).toBe(before);
  });

  it("a malformed artifact argument is INVALID_ARGUMENT and nothing is fetched", async () => {
    const before = fetched.length;
    const out = await runJob(bundleJob({ sha256: "../../etc/passwd", bytes: 1 }), { ...ctx, fetchArtifact: fileFetcher(Buffer.from("x")) });
    expect(out.error?.code).toBe("INVALID_ARGUMENT");
    expect(fetched.length).toBe(before);
  });
});
