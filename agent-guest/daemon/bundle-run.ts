/**
 * Running a bundle worker (a capability whose worker is a content-addressed
 * bundle, agent-guest/workers/): the runner's table entry for such
 * capabilities, the fresh per-job directory that holds the input artifact,
 * and the reading of the worker's JSON result.
 *
 * Order, each step refusing before the next:
 *   1 the signed job names the expected worker digest; the store's bundle is
 *     read by descriptor and re-hashed now (loadVerifiedBundle) — a
 *     mismatch or an absent bundle is WORKER_DIGEST_MISMATCH, nothing runs
 *   2 a fresh directory `<stateDir>/jobs/<random>` (outside the workspace:
 *     no workload can reach or name it; made by descriptor), with
 *     `artifact` (0444) created O_EXCL|O_NOFOLLOW in it and filled by the
 *     hub fetch; its size and SHA-256 are checked again by reading the
 *     descriptor back — a mismatch is INVALID_ARGUMENT, nothing runs
 *   3 launch `node --input-type=module - <operation> /work/artifact` with the
 *     VERIFIED entry bytes on stdin (no path to the code is ever handed to
 *     the sandbox, so nothing can swap it between the check and the run),
 *     the job directory bound read-only at /work, no network
 *   4 scrub, then parse stdout as the worker's one JSON document; the per-job
 *     directory is removed whatever happened
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import { isLeaseholdError, LeaseholdError } from "../../server/trust";
import path from "node:path";
import { projectPath } from "../../common/paths";
import { installBundle, loadVerifiedBundle, type VerifiedBundle } from "../workers/bundle";
import type { VerifiedJob } from "./verify-job";

/** What a prepared action's `artifact` argument became on the hub: the digest and size of the bytes. */
export interface ArtifactRef {
  sha256: string;
  bytes: number;
}

/** Writes the job's artifact to `fd` from offset 0 (agent-guest/daemon/artifact-fetch.ts in the daemon; tests pass their own). */
export type FetchArtifact = (jobId: string, ref: ArtifactRef, fd: number) => Promise<void>;

/** A bundle capability operation: which JSON document its worker prints. */
export interface BundleOperation {
  resultSchema: string;
}

/**
 * The table of operations whose worker is a bundle, keyed
 * `capability.operation` like the runner's other tables.
 */
export const BUNDLED: Readonly<Record<string, BundleOperation>> = {
  "apk-static.apk_inspect": { resultSchema: "leasehold.apk-static.result/1" },
  "apk-static.apk_preflight": { resultSchema: "leasehold.apk-static.result/1" },
};

/** Capabilities that have a bundle worker (the health report's and the daemon's install list). */
export const BUNDLE_CAPABILITIES: readonly string[] = [...new Set(Object.keys(BUNDLED).map((key) => key.slice(0, key.indexOf("."))))].sort();

/** The exit status a worker uses for "the input was refused" (its stdout then holds {error}). */
export const WORKER_REFUSED_EXIT = 3;

const { O_RDONLY, O_RDWR, O_DIRECTORY, O_NOFOLLOW, O_CREAT, O_EXCL } = fs.constants;
const under = (dirFd: number, name: string): string => `/proc/self/fd/${dirFd}/${name}`;

function guestError(code: ConstructorParameters<typeof LeaseholdError>[0], message: string, details?: Record<string, unknown>): LeaseholdError {
  return new LeaseholdError(code, message, { tier: "guest", ...(details ? { details } : {}) });
}

/** The job's artifact reference from the hashed arguments, or INVALID_ARGUMENT. */
export function artifactRefOf(args: Record<string, unknown>, maxBytes: number): ArtifactRef {
  const a = args["artifact"] as Partial<ArtifactRef> | undefined;
  if (a === null || typeof a !== "object" || typeof a.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(a.sha256) || typeof a.bytes !== "number" || !Number.isSafeInteger(a.bytes) || a.bytes < 0) {
    throw guestError("INVALID_ARGUMENT", "the job's artifact argument is not {sha256: <64 lower hex>, bytes: <integer>}", { field: "artifact" });
  }
  if (a.bytes > maxBytes) throw guestError("POLICY_REFUSED", `the artifact (${a.bytes} bytes) is larger than this host's workspace (${maxBytes} bytes)`, { field: "artifact" });
  return { sha256: a.sha256, bytes: a.bytes };
}

/**
 * The job's verified bundle: the digest the signed job names, re-hashed from
 * the store now. An absent bundle is a mismatch too (the host has another
 * one, or none): the hub asked for code this host does not hold.
 */
export function verifiedBundleFor(job: VerifiedJob, store: string | undefined, installed: Readonly<Record<string, string>>): VerifiedBundle {
  const expected = job.capability.worker_digest;
  if (expected === undefined) throw guestError("POLICY_REFUSED", `the signed job names no worker digest for ${job.capability.id}, whose worker is a bundle; nothing was launched`, { field: "capability.worker_digest" });
  if (store === undefined) throw guestError("UNENFORCEABLE", "this guest has no worker store", {});
  let bundle: VerifiedBundle;
  try {
    bundle = loadVerifiedBundle(store, expected);
  } catch (error) {
    if (isLeaseholdError(error) && error.code === "NOT_FOUND") {
      const have = installed[job.capability.id];
      throw guestError("WORKER_DIGEST_MISMATCH", `the job expects ${job.capability.id} worker ${expected}, this host holds ${have ?? "none"}; nothing was launched`, { expected, installed: have ?? null });
    }
    throw error;
  }
  if (bundle.manifest.capability !== job.capability.id) {
    throw guestError("WORKER_DIGEST_MISMATCH", `bundle ${expected} is a ${bundle.manifest.capability} worker, not ${job.capability.id}; nothing was launched`, { expected });
  }
  return bundle;
}

/** A fresh per-job directory in the guest's private job directory, held by descriptor; `remove()` takes it away again. */
export interface JobDirectory {
  /** Host path of the directory (the sandbox's workdir). */
  path: string;
  /** The open `artifact` file (0444, read-write for us only through this descriptor). */
  artifactFd: number;
  remove(): void;
}

/**
 * The guest's private directory for job directories: `<stateDir>/jobs`,
 * beside the worker store. It is never inside the workspace: a workload
 * that may write the workspace owns its root and could rename, replace or
 * symlink anything kept there, so it could neither be trusted nor kept
 * working for the next caller.
 */
export function jobsPath(stateDir: string): string {
  return path.join(stateDir, "jobs");
}

function openDir(where: string): number {
  return fs.openSync(where, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
}

const ourUid = (): number => process.getuid?.() ?? 0;

/**
 * Opens the parent of the jobs directory (the state directory): it must be
 * a directory of ours that nobody else can write, or no name under it is
 * ours alone. That is the operator's set-up, not something a workload can
 * change, so a wrong one is UNENFORCEABLE.
 */
function openPrivateParent(where: string): number {
  let fd: number;
  try {
    fd = openDir(where);
  } catch (error) {
    throw guestError("UNENFORCEABLE", `the guest's state directory ${where} does not open as a directory (${(error as NodeJS.ErrnoException).code ?? "error"}); bundle jobs need it`);
  }
  const st = fs.fstatSync(fd);
  if (st.uid !== ourUid() || (st.mode & 0o022) !== 0) {
    fs.closeSync(fd);
    throw guestError("UNENFORCEABLE", `the guest's state directory ${where} is owned by uid ${st.uid} with mode ${(st.mode & 0o7777).toString(8)}; it must be root's and writable by root only`);
  }
  return fd;
}

/** Opens `name` under `parentFd` when it is a directory of ours with no access for group or others. */
function openIfPrivate(parentFd: number, name: string): number | undefined {
  let fd: number;
  try {
    fd = openDir(under(parentFd, name));
  } catch {
    return undefined;
  }
  const st = fs.fstatSync(fd);
  if (st.uid === ourUid() && (st.mode & 0o077) === 0) return fd;
  fs.closeSync(fd);
  return undefined;
}

/**
 * The jobs directory, held by descriptor: made 0700 when missing; when what
 * is there is not a private directory of ours (a file, a symlink, another
 * owner, a wider mode), it is renamed aside (`jobs.aside-<random>`, never
 * followed or opened) and a fresh one is made. A damaged guest path is
 * repaired, never a reason to refuse a job.
 */
function openJobsDirectory(jobsRoot: string): number {
  const parentFd = openPrivateParent(path.dirname(jobsRoot));
  const name = path.basename(jobsRoot);
  try {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        fs.mkdirSync(under(parentFd, name), { mode: 0o700 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      const fd = openIfPrivate(parentFd, name);
      if (fd !== undefined) return fd;
      fs.renameSync(under(parentFd, name), under(parentFd, `${name}.aside-${randomBytes(8).toString("hex")}`));
    }
    throw guestError("UNENFORCEABLE", `${jobsRoot} was replaced again while the guest re-created it; something with root's rights is changing the guest's state directory`);
  } finally {
    fs.closeSync(parentFd);
  }
}

/**
 * Makes a new directory `name` under the held `parentFd` by the descriptor
 * rule: mkdir 0700 through /proc/self/fd, open it O_NOFOLLOW, check it is
 * the inode lstat saw and still looks freshly ours (root-owned, no entries),
 * then set its mode on the descriptor.
 */
function makeDirectory(parentFd: number, name: string, mode: number): number {
  fs.mkdirSync(under(parentFd, name), { mode: 0o700 });
  const seen = fs.lstatSync(under(parentFd, name));
  const fd = openDir(under(parentFd, name));
  const st = fs.fstatSync(fd);
  if (st.ino !== seen.ino || st.dev !== seen.dev || st.uid !== ourUid() || fs.readdirSync(`/proc/self/fd/${fd}`).length > 0) {
    fs.closeSync(fd);
    throw guestError("UNENFORCEABLE", `job directory ${name} is not the directory this guest just made (owner uid ${st.uid})`);
  }
  fs.fchmodSync(fd, mode);
  return fd;
}

/**
 * `<jobsRoot>/<128-bit random>/artifact`, where `jobsRoot` is the guest's
 * private jobs directory (`jobsPath`, root-only 0700, in the root-only
 * state directory): no workload can list, enter, rename or name anything
 * on that path, and the sandbox gets only the job directory itself, bound
 * read-only at /work. The job directory is 0755 (the lease uid reads it at
 * /work), the artifact 0444, created O_EXCL|O_NOFOLLOW and filled through
 * its descriptor.
 */
export function makeJobDirectory(jobsRoot: string): JobDirectory {
  const parentFd = openJobsDirectory(jobsRoot);
  let dirFd: number | undefined;
  let artifactFd: number | undefined;
  const name = randomBytes(16).toString("hex");
  try {
    dirFd = makeDirectory(parentFd, name, 0o755);
    const dir = dirFd;
    artifactFd = fs.openSync(under(dir, "artifact"), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0o444);
    fs.fchmodSync(artifactFd, 0o444);
    const fd = artifactFd;
    return {
      path: `${jobsRoot.replace(/\/+$/, "")}/${name}`,
      artifactFd: fd,
      remove: () => {
        try {
          fs.closeSync(fd);
        } catch {
          // already closed
        }
        // Only the artifact can be in it: the sandbox had the directory read-only.
        fs.rmSync(under(dir, "artifact"), { force: true });
        fs.rmdirSync(under(parentFd, name));
        fs.closeSync(dir);
        fs.closeSync(parentFd);
      },
    };
  } catch (error) {
    if (artifactFd !== undefined) fs.closeSync(artifactFd);
    if (dirFd !== undefined) {
      fs.rmSync(under(dirFd, "artifact"), { force: true });
      fs.rmdirSync(under(parentFd, name));
      fs.closeSync(dirFd);
    }
    fs.closeSync(parentFd);
    throw error;
  }
}

/**
 * Removes job directories a previous run left behind (the guest was killed
 * mid-job), by descriptor: each `<random>/` of the private jobs directory
 * loses its `artifact` and is removed. Called at daemon start, before any
 * job. Anything else there is left for the operator. Returns how many were
 * removed.
 */
export function sweepJobDirectories(jobsRoot: string): number {
  let parentFd: number | undefined;
  try {
    const stateFd = openPrivateParent(path.dirname(jobsRoot));
    try {
      parentFd = openIfPrivate(stateFd, path.basename(jobsRoot));
    } finally {
      fs.closeSync(stateFd);
    }
    if (parentFd === undefined) return 0;
    let removed = 0;
    for (const name of fs.readdirSync(`/proc/self/fd/${parentFd}`)) {
      if (!/^[0-9a-f]{32}$/.test(name)) continue;
      let dirFd: number;
      try {
        dirFd = openDir(under(parentFd, name));
      } catch {
        continue;
      }
      try {
        fs.rmSync(under(dirFd, "artifact"), { force: true });
        fs.rmdirSync(under(parentFd, name));
        removed += 1;
      } catch {
        // Something else is in it: not a directory this guest made; left for the operator.
      } finally {
        fs.closeSync(dirFd);
      }
    }
    return removed;
  } finally {
    if (parentFd !== undefined) fs.closeSync(parentFd);
  }
}

/**
 * Fills the artifact through `fetch` and checks what the descriptor now holds
 * — size and SHA-256 of every byte from offset 0 — against the reference in
 * the signed job, whatever the fetcher itself checked.
 */
export async function fillArtifact(fetch: FetchArtifact, jobId: string, ref: ArtifactRef, fd: number): Promise<void> {
  await fetch(jobId, ref, fd);
  const size = fs.fstatSync(fd).size;
  const hash = createHash("sha256");
  const chunk = Buffer.alloc(1024 * 1024);
  let at = 0;
  for (;;) {
    const n = fs.readSync(fd, chunk, 0, chunk.length, at);
    if (n === 0) break;
    hash.update(chunk.subarray(0, n));
    at += n;
  }
  const sha = hash.digest("hex");
  if (at !== ref.bytes || size !== ref.bytes || sha !== ref.sha256) {
    throw guestError("INVALID_ARGUMENT", `the fetched artifact is ${at} bytes with sha256 ${sha}, the signed job names ${ref.bytes} bytes with sha256 ${ref.sha256}; nothing was launched`, { field: "artifact", expected: ref.sha256, actual: sha });
  }
}

/** The last `max` characters of a stream, for an error message. */
function tail(bytes: Buffer, max = 600): string {
  const text = bytes.toString("utf8");
  return text.length > max ? `…${text.slice(-max)}` : text;
}

export type WorkerVerdict = { ok: true; result: Record<string, unknown> } | { ok: false; error: LeaseholdError };

/**
 * What the worker's (scrubbed) output means: exit 0 and one JSON object of
 * the operation's result schema → the result; exit 3 with `{error}` → the
 * worker refused the input (INVALID_ARGUMENT with its message); anything
 * else → a failure naming the exit and the end of stderr.
 */
export function readWorkerResult(
  op: BundleOperation,
  run: { exitCode: number | null; signal: string | null; timedOut: boolean; oomKilled: boolean | null; stdoutCut: boolean },
  stdout: Buffer,
  stderr: Buffer,
  expected?: ArtifactRef,
): WorkerVerdict {
  const fail = (code: "INTERNAL" | "TIMEOUT" | "INVALID_ARGUMENT", message: string, details: Record<string, unknown> = {}): WorkerVerdict => ({
    ok: false,
    error: guestError(code, message, { exit: run.exitCode, signal: run.signal, ...details }),
  });
  if (run.timedOut) return fail("TIMEOUT", `the worker did not finish within the job's timeout; stderr: ${tail(stderr)}`);
  const how = run.exitCode !== null ? `exit ${run.exitCode}` : `signal ${run.signal ?? "unknown"}${run.oomKilled === true ? " (killed by the memory limit)" : ""}`;
  if (run.stdoutCut) return fail("INTERNAL", `the worker's output was larger than this host returns (${how}); stderr: ${tail(stderr)}`);
  let doc: unknown;
  try {
    doc = JSON.parse(stdout.toString("utf8"));
  } catch {
    return fail("INTERNAL", `the worker did not print one JSON document (${how}, ${stdout.length} bytes on stdout); stderr: ${tail(stderr)}`);
  }
  if (doc === null || typeof doc !== "object" || Array.isArray(doc) || (doc as Record<string, unknown>)["schema"] !== op.resultSchema) {
    return fail("INTERNAL", `the worker printed JSON that is not a ${op.resultSchema} document (${how}); stderr: ${tail(stderr)}`);
  }
  const result = doc as Record<string, unknown>;
  if (run.exitCode === WORKER_REFUSED_EXIT) {
    const e = result["error"] as { code?: unknown; message?: unknown } | undefined;
    const message = typeof e?.message === "string" ? e.message.slice(0, 2000) : "the worker refused the input without a message";
    return fail("INVALID_ARGUMENT", message, { worker_code: typeof e?.code === "string" ? e.code : null });
  }
  if (run.exitCode !== 0) return fail("INTERNAL", `the worker failed (${how}); stderr: ${tail(stderr)}`);
  if ("error" in result) return fail("INTERNAL", "the worker exited 0 but printed an error document");
  // The worker hashes what it read itself: a result about other bytes than the verified input (a
  // swapped file between our check and the launcher's bind) is never passed on as this artifact's.
  const seen = result["artifact"] as Partial<ArtifactRef> | undefined;
  if (expected !== undefined && (seen?.sha256 !== expected.sha256 || seen.bytes !== expected.bytes)) {
    return fail("INTERNAL", `the worker reports reading ${JSON.stringify(seen ?? null)}, not the verified artifact ${expected.sha256} (${expected.bytes} bytes); its result is withheld`);
  }
  return { ok: true, result };
}

/** What the daemon installed at start for one bundle capability: its verified digest, or why there is none. */
export type InstalledBundle = { digest: string; version: string; detail: null } | { digest: null; version: null; detail: string };

/** The guest's content-addressed store: `<stateDir>/workers` (root-only, like the state directory). */
export function workerStorePath(stateDir: string): string {
  return path.join(stateDir, "workers");
}

/**
 * Installs the bundles this checkout ships (dist/workers/<capability>/, built
 * by `npm run build`) into the store, re-verifying what is already there.
 * A missing or refused bundle is not fatal: that capability is reported not
 * ready, with the reason, and every other capability keeps working.
 */
export function installShippedBundles(store: string, workersDir: string = projectPath("dist", "workers")): Record<string, InstalledBundle> {
  const out: Record<string, InstalledBundle> = {};
  for (const capability of BUNDLE_CAPABILITIES) {
    const source = path.join(workersDir, capability);
    try {
      const bundle = installBundle(source, store);
      out[capability] =
        bundle.manifest.capability === capability
          ? { digest: bundle.digest, version: bundle.manifest.version, detail: null }
          : { digest: null, version: null, detail: `the bundle at ${source} is a ${bundle.manifest.capability} worker` };
    } catch (error) {
      const reason = isLeaseholdError(error) && error.code === "NOT_FOUND" ? `no worker bundle at ${source} (run \`npm run build\` in the checkout)` : `worker bundle at ${source} refused: ${error instanceof Error ? error.message : String(error)}`;
      out[capability] = { digest: null, version: null, detail: reason.slice(0, 900) };
    }
  }
  return out;
}
