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
 *   2 a fresh directory `<workspace>/.leasehold-jobs/<random>` (parent
 *     root-only 0700, made by the descriptor rule: agent-guest/README.md),
 *     with `artifact` (0444) created O_EXCL|O_NOFOLLOW in it and filled by
 *     the hub fetch; its size and SHA-256 are checked again by reading the
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
import { GUEST_JOBS_DIR } from "../workspace/index";
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

/** Where job directories live, at the workspace root; workspace operations refuse the name (workspace.ts). */
export const JOBS_DIR_NAME = GUEST_JOBS_DIR;

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

/** A fresh per-job directory in the workspace, held by descriptor; `remove()` takes it away again. */
export interface JobDirectory {
  /** Host path of the directory (the sandbox's workdir). */
  path: string;
  /** The open `artifact` file (0444, read-write for us only through this descriptor). */
  artifactFd: number;
  remove(): void;
}

function openDir(where: string): number {
  return fs.openSync(where, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
}

/**
 * Makes a new directory `name` under the held `parentFd` by the descriptor
 * rule: mkdir 0700 through /proc/self/fd, open it O_NOFOLLOW, check it is
 * the inode lstat saw and still looks freshly ours (root-owned, 0700 or the
 * mode we want, no entries), then set its mode on the descriptor.
 */
function makeDirectory(parentFd: number, name: string, mode: number, reuse: boolean): number {
  try {
    fs.mkdirSync(under(parentFd, name), { mode: 0o700 });
  } catch (error) {
    if (!reuse || (error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const seen = fs.lstatSync(under(parentFd, name));
  let fd: number;
  try {
    fd = openDir(under(parentFd, name));
  } catch (error) {
    throw guestError("UNENFORCEABLE", `${name} in the workspace is not a directory that opens without following a link (${(error as NodeJS.ErrnoException).code ?? "error"})`);
  }
  const st = fs.fstatSync(fd);
  const uid = process.getuid?.() ?? st.uid;
  if (st.ino !== seen.ino || st.dev !== seen.dev || st.uid !== uid || (!reuse && fs.readdirSync(`/proc/self/fd/${fd}`).length > 0)) {
    fs.closeSync(fd);
    throw guestError("UNENFORCEABLE", `${name} in the workspace is not the directory this guest made (owner uid ${st.uid}); remove it and retry`);
  }
  fs.fchmodSync(fd, mode);
  return fd;
}

/**
 * `<workspace>/.leasehold-jobs/<128-bit random>/artifact`. The parent is
 * root-only (0700): no workload can list, enter or change what is in it, so
 * the random name is known to this guest alone, and the guest's own
 * workspace operations refuse the name. A workload that owns the workspace
 * root (an exclusive lease) can rename the parent itself; the launcher's
 * open by path then finds our directory or nothing, since no directory it
 * controls can hold a name it does not know. The job directory itself is
 * 0755 (the lease uid enters it at /work), the artifact 0444.
 */
export function makeJobDirectory(workspaceRoot: string): JobDirectory {
  const rootFd = openDir(workspaceRoot);
  let parentFd: number | undefined;
  let dirFd: number | undefined;
  let artifactFd: number | undefined;
  const name = randomBytes(16).toString("hex");
  try {
    parentFd = makeDirectory(rootFd, JOBS_DIR_NAME, 0o700, true);
    const parent = parentFd;
    dirFd = makeDirectory(parent, name, 0o755, false);
    const dir = dirFd;
    artifactFd = fs.openSync(under(dir, "artifact"), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0o444);
    fs.fchmodSync(artifactFd, 0o444);
    const fd = artifactFd;
    return {
      path: `${workspaceRoot.replace(/\/+$/, "")}/${JOBS_DIR_NAME}/${name}`,
      artifactFd: fd,
      remove: () => {
        try {
          fs.closeSync(fd);
        } catch {
          // already closed
        }
        // Only the artifact can be in it: the sandbox had the directory read-only.
        fs.rmSync(under(dir, "artifact"), { force: true });
        fs.rmdirSync(under(parent, name));
        fs.closeSync(dir);
        fs.closeSync(parent);
        fs.closeSync(rootFd);
      },
    };
  } catch (error) {
    if (artifactFd !== undefined) fs.closeSync(artifactFd);
    if (dirFd !== undefined && parentFd !== undefined) {
      fs.rmSync(under(dirFd, "artifact"), { force: true });
      fs.rmdirSync(under(parentFd, name));
    }
    if (dirFd !== undefined) fs.closeSync(dirFd);
    if (parentFd !== undefined) fs.closeSync(parentFd);
    fs.closeSync(rootFd);
    throw error;
  }
}

/**
 * Removes job directories a previous run left behind (the guest was killed
 * mid-job), by descriptor: each `<random>/` of the root-only parent loses its
 * `artifact` and is removed. Called at daemon start, before any job. A
 * parent that is not a root-only directory of ours is left alone (the next
 * job refuses it, saying so). Returns how many were removed.
 */
export function sweepJobDirectories(workspaceRoot: string): number {
  const rootFd = openDir(workspaceRoot);
  let parentFd: number | undefined;
  try {
    try {
      parentFd = openDir(under(rootFd, JOBS_DIR_NAME));
    } catch {
      return 0;
    }
    const st = fs.fstatSync(parentFd);
    if (st.uid !== (process.getuid?.() ?? st.uid) || (st.mode & 0o077) !== 0) return 0;
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
    fs.closeSync(rootFd);
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
