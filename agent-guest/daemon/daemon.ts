/**
 * The guest daemon: connects out to the hub, reports health, long-polls for
 * jobs, runs them (verify → ceiling → sandbox → scrub → sign), streams the
 * scrubbed output and then the signed envelope back, and witnesses the
 * ledger. Reconnects with backoff; a job's result is retried until the hub
 * stores it or the job's deadline passes (the hub stores it once). While a
 * job runs its claim is renewed by heartbeat, so the hub knows it is alive.
 *
 * Workspace: before anything else, run() mounts the bounded workspace (an
 * ext4 image on a loop device at workspace_root, nosuid,nodev; see
 * workspace/volume.ts) and refuses to start without it; after the last job
 * has finished it unmounts it.
 *
 * Concurrency: up to `slots` jobs at once; jobs that write the workspace
 * (a mutating operation under an exclusive lease) run one at a time, because the launcher hands the workspace to
 * one lease uid for the run.
 */
import { createPublicKey, type KeyObject } from "node:crypto";
import { loadCeiling, type HostCeiling } from "../ceiling/index";
import { mountWorkspace, unmountWorkspace, type MountedWorkspace } from "../workspace/index";
import { HeartbeatAnswer, OUTPUT_CHUNK_BYTES } from "../../server/trust";
import { HubClient, HubError, backoffMs, sleep } from "./client";
import { fetchJobArtifact } from "./artifact-fetch";
import { installShippedBundles, jobsPath, sweepJobDirectories, workerStorePath, type InstalledBundle } from "./bundle-run";
import { listWorkspaceDirs } from "./workspace-dirs";
import { healthReport, measureHost, type Measured } from "./health";
import { reportedSnapshots, snapshotsPath, takeBaselines } from "./host-paths-run";
import { migrateStore, sweepPartialSnapshots } from "../snapshots/index";
import { refusalOutcome, runJob, type JobOutcome, type RunnerContext } from "./runner";
import { SeenJobs, loadEnrolment, loadHostKey, loadWitnessKey, type Enrolment } from "./state";
import { verifySignedJob } from "./verify-job";
import { WITNESS_INTERVAL_MS, Witness } from "./witness";
import { traceStage } from "../../common/trace/stage";

export interface DaemonOptions {
  stateDir: string;
  ceilingPath: string;
  slots?: number;
  log?: (line: string) => void;
  healthIntervalMs?: number;
  witnessIntervalMs?: number;
  /** Where the shipped worker bundles are (default: the checkout's dist/workers). */
  workersDir?: string;
}

interface DeliveredJob {
  id: string;
  document: unknown;
  signature: string;
}

// Well inside the hub's HEARTBEAT_LOST_MS (10 s), after which a silent job counts as lost.
const HEARTBEAT_EVERY_MS = 2_000;
const PROGRESS_EVERY_MS = 1_000;

class Mutex {
  private tail: Promise<void> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

export class GuestDaemon {
  readonly enrolment: Enrolment;
  private readonly client: HubClient;
  private readonly hostKey: KeyObject;
  private readonly jobKey: KeyObject;
  private readonly ceiling: HostCeiling;
  private readonly seen: SeenJobs;
  /** The last job this process finished (its result delivered), for the workspace listing's `after_job`. */
  private lastFinished: string | null = null;
  /** Job ids this process is acknowledging or running. */
  private readonly taken = new Set<string>();
  private readonly witness: Witness;
  private readonly stop = new AbortController();
  private readonly workspaceLock = new Mutex();
  private readonly log: (line: string) => void;
  private measured: Measured | undefined;
  private bundles: Readonly<Record<string, InstalledBundle>> = {};
  private witnessFailure: string | null = null;
  private running: Promise<unknown>[] = [];

  constructor(private readonly options: DaemonOptions) {
    const enrolment = loadEnrolment(options.stateDir);
    if (enrolment === null) throw new Error(`not enrolled: no enrolment.json in ${options.stateDir} (run leasehold-guest enrol --hub URL, the code on stdin or in LEASEHOLD_ENROL_CODE)`);
    this.enrolment = enrolment;
    this.hostKey = loadHostKey(options.stateDir);
    this.jobKey = createPublicKey(enrolment.job_key);
    this.ceiling = loadCeiling(options.ceilingPath);
    this.client = new HubClient(enrolment.hub, enrolment.host_id, this.hostKey);
    this.seen = new SeenJobs(options.stateDir);
    this.witness = new Witness(options.stateDir, enrolment.hub, enrolment.log_key, loadWitnessKey(options.stateDir));
    this.log = options.log ?? ((line) => console.error(`leasehold-guest: ${line}`));
  }

  get accepting(): boolean {
    return this.witnessFailure === null && !this.stop.signal.aborted;
  }

  private context(): RunnerContext {
    const m = this.measured;
    if (m === undefined || m.tier === null || m.digest === null) throw new Error("host not measured");
    const installed = Object.fromEntries(Object.entries(this.bundles).flatMap(([capability, b]) => (b.digest === null ? [] : [[capability, b.digest]])));
    return {
      hostId: this.enrolment.host_id,
      hostKey: this.hostKey,
      ceiling: this.ceiling,
      tier: m.tier,
      workerDigest: m.digest,
      workerStore: workerStorePath(this.options.stateDir),
      jobsDir: jobsPath(this.options.stateDir),
      snapshotsDir: snapshotsPath(this.options.stateDir),
      installedBundles: installed,
      // The job's input comes from the hub over this guest's signed connection, checked range by range and whole.
      fetchArtifact: (jobId, ref, fd) => fetchJobArtifact(this.client, jobId, ref, fd, { signal: this.stop.signal }),
    };
  }

  async reportHealth(): Promise<void> {
    if (this.measured === undefined) return;
    const report = healthReport(this.measured, { size: this.witness.size, failure: this.witnessFailure }, this.accepting, reportedSnapshots(snapshotsPath(this.options.stateDir)));
    // Listed only while no job is taken or running (synchronously, so none starts mid-walk): the hub trusts it
    // only as long as `lastFinished` is the host's latest claimed job (server/hosts/workspace-dirs.ts).
    if (this.taken.size === 0) report.workspace_dirs = listWorkspaceDirs(this.ceiling.workspace_root, this.lastFinished);
    await this.client.request("POST", "/api/agent/health", report);
  }

  /** Mounts the bounded workspace (throws, and nothing runs, when it cannot); then runs until `shutdown()`; then unmounts it. */
  async run(): Promise<void> {
    const { workspace_root: root, workspace_max_bytes: maxBytes, workspace_max_inodes: maxInodes } = this.ceiling;
    const volume = mountWorkspace({ root, stateDir: this.options.stateDir, maxBytes, maxInodes }, { log: this.log });
    try {
      await this.serve();
    } finally {
      this.unmount(volume);
    }
  }

  private unmount(volume: MountedWorkspace): void {
    try {
      if (unmountWorkspace(volume)) this.log(`workspace ${volume.root} unmounted`);
    } catch (error) {
      this.log(`workspace ${volume.root}: unmount failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async serve(): Promise<void> {
    // Shipped bundles into the root-only store, re-verified; one that is missing leaves only its capability not ready.
    this.bundles = installShippedBundles(workerStorePath(this.options.stateDir), this.options.workersDir);
    for (const [capability, b] of Object.entries(this.bundles)) this.log(`worker ${capability}: ${b.digest ?? `not ready (${b.detail})`}`);
    const swept = sweepJobDirectories(jobsPath(this.options.stateDir));
    if (swept > 0) this.log(`removed ${swept} job director${swept === 1 ? "y" : "ies"} a previous run left in ${jobsPath(this.options.stateDir)}`);
    const migration = migrateStore(snapshotsPath(this.options.stateDir));
    if (migration.migrated.length > 0) this.log(`snapshot store: ${migration.migrated.length} leasehold.snapshot/1 snapshot(s) moved to the content-addressed store`);
    for (const id of migration.dropped) this.log(`snapshot store: snapshot ${id} removed: a stored file does not hash to what its manifest says`);
    const partial = sweepPartialSnapshots(snapshotsPath(this.options.stateDir));
    if (partial > 0) this.log(`removed ${partial} half-built snapshot${partial === 1 ? "" : "s"} a previous run left in ${snapshotsPath(this.options.stateDir)}`);
    // Before the first health report: a host takes no job while its labels' baselines are being copied.
    for (const b of takeBaselines(this.ceiling, snapshotsPath(this.options.stateDir))) {
      if ("taken" in b) this.log(`host path ${b.label}: baseline snapshot ${b.taken} taken in ${Math.round(b.ms)} ms`);
      else if ("failed" in b) this.log(`host path ${b.label}: no baseline snapshot (${b.failed}); its jobs' snapshots copy the whole tree`);
    }
    this.measured = await measureHost(this.ceiling, this.bundles);
    this.log(`host ${this.enrolment.name} (${this.enrolment.host_id}): tier ${this.measured.tier ?? "none"}, self-test ${this.measured.self_test} (${this.measured.self_test_detail})`);
    await this.retry("health report", () => this.reportHealth());
    const healthTimer = setInterval(() => void this.reportHealth().catch((e: unknown) => this.log(`health report failed: ${String(e)}`)), this.options.healthIntervalMs ?? 30_000);
    const witnessLoop = this.witnessLoop();
    const slots = Math.max(1, this.options.slots ?? 4);
    this.running = Array.from({ length: slots }, () => this.pollLoop());
    await Promise.all(this.running);
    clearInterval(healthTimer);
    await witnessLoop;
  }

  async shutdown(): Promise<void> {
    this.stop.abort();
    await Promise.allSettled(this.running);
  }

  private async retry<T>(what: string, fn: () => Promise<T>, until = Number.POSITIVE_INFINITY): Promise<T | undefined> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await fn();
      } catch (error) {
        if (error instanceof HubError && !error.transient) throw error;
        if (this.stop.signal.aborted || Date.now() > until) return undefined;
        if (attempt % 10 === 0) this.log(`${what}: ${error instanceof Error ? error.message : String(error)}; retrying`);
        await sleep(backoffMs(attempt), this.stop.signal);
      }
    }
  }

  private async witnessLoop(): Promise<void> {
    while (!this.stop.signal.aborted) {
      const step = await this.witness.step();
      if (step.kind === "failed") {
        this.witnessFailure = step.reason;
        this.log(`WITNESS CHECK FAILED: ${step.reason} — this guest stops taking jobs`);
        await this.reportHealth().catch(() => undefined);
        return;
      }
      await sleep(this.options.witnessIntervalMs ?? WITNESS_INTERVAL_MS, this.stop.signal);
    }
  }

  private async pollLoop(): Promise<void> {
    let attempt = 0;
    while (this.accepting) {
      let delivered: DeliveredJob | null = null;
      try {
        const res = await this.client.request("GET", "/api/agent/jobs?wait=20000", undefined, { signal: this.stop.signal, timeoutMs: 35_000 });
        attempt = 0;
        if (res.status === 200) delivered = (res.body as { job: DeliveredJob & { document: { job_id?: string } } }).job;
      } catch (error) {
        if (this.stop.signal.aborted) return;
        if (attempt % 10 === 0) this.log(`hub connection: ${error instanceof Error ? error.message : String(error)}; reconnecting`);
        await sleep(backoffMs(attempt), this.stop.signal);
        attempt += 1;
        continue;
      }
      if (delivered !== null && this.accepting) await this.handle(delivered);
    }
  }

  private async handle(delivered: DeliveredJob): Promise<void> {
    const doc = (delivered.document ?? {}) as { job_id?: unknown; deadline?: unknown; action_id?: unknown; action_hash?: unknown; action?: { capability?: { id?: string; version?: string } } };
    const id = typeof doc.job_id === "string" ? doc.job_id : "";
    delivered = { ...delivered, id: typeof delivered.id === "string" ? delivered.id : id };
    const deadline = Date.parse(String(doc.deadline)) || Date.now() + 60_000;
    const jobId = delivered.id;
    const traceId = typeof doc.action_id === "string" ? doc.action_id : jobId;
    traceStage(traceId, "guest.received");
    // A long-poll only offers the job: nothing runs, and nothing is remembered as seen, before the
    // hub confirms it is ours. A withdrawn offer was re-queued or ended as not run on the hub.
    // The same job offered again while this process still handles it (an ack that crossed the hub's
    // re-queue of its first offer) is taken once. Once handled, a repeat goes through the replay record
    // (verify-job.ts) and is refused there with signed evidence, as any replayed job.
    if (this.taken.has(jobId)) {
      this.log(`job ${jobId} offered again while it is being handled; ignored`);
      return;
    }
    this.taken.add(jobId);
    try {
      const taken = await this.client.ackJob(jobId, { signal: this.stop.signal });
      if (taken.taken !== "acked") {
        this.log(`job ${jobId} not taken: ${taken.reason}`);
        return;
      }
      await this.runTaken(delivered, doc, jobId, traceId, deadline);
    } finally {
      this.taken.delete(jobId);
    }
    // Reached only for a job that ran and was delivered. It may have changed the workspace: once none runs,
    // the hub gets a fresh listing at once (not in 30 s).
    this.lastFinished = jobId;
    if (this.taken.size === 0) await this.reportHealth().catch((e: unknown) => this.log(`health report after job ${jobId} failed: ${String(e)}`));
  }

  /** Runs an acknowledged job: heartbeats while it runs, then delivers the outcome. */
  private async runTaken(
    delivered: DeliveredJob,
    doc: { action_id?: unknown; action_hash?: unknown; action?: { capability?: { id?: string; version?: string } } },
    jobId: string,
    traceId: string,
    deadline: number,
  ): Promise<void> {
    // The heartbeat carries the workload's output so far (a count), which the hub passes to the
    // waiting caller as progress. New output is reported at once, at most every PROGRESS_EVERY_MS.
    let output: { stdout_bytes: number; stderr_bytes: number } | undefined;
    let beatAt = 0;
    // The hub's stop comes back on the stop watch or a heartbeat's answer (docs/design.md#cancel): the run's lease is killed.
    const stop = new AbortController();
    const sendBeat = (): void => {
      beatAt = Date.now();
      void this.client
        .request("POST", `/api/agent/jobs/${jobId}/heartbeat`, output === undefined ? {} : { output })
        .then((res) => {
          if (HeartbeatAnswer.safeParse(res.body).data?.stop === true && !stop.signal.aborted) {
            this.log(`job ${jobId}: the hub asked to stop it; killing its lease`);
            stop.abort();
          }
        })
        .catch(() => undefined);
    };
    const beat = setInterval(sendBeat, HEARTBEAT_EVERY_MS);
    const ran = new AbortController();
    void this.watchForStop(jobId, stop, ran.signal);
    const onProgress = (p: { stdout_bytes: number; stderr_bytes: number }): void => {
      output = p;
      if (Date.now() - beatAt >= PROGRESS_EVERY_MS) sendBeat();
    };
    try {
      let outcome: JobOutcome;
      try {
        const job = verifySignedJob(delivered, { jobKey: this.jobKey, hostId: this.enrolment.host_id, seen: this.seen });
        const run = () => runJob(job, this.context(), { onProgress, signal: stop.signal });
        outcome = job.writesWorkspace ? await this.workspaceLock.run(run) : await run();
      } catch (error) {
        this.log(`job ${delivered.id} refused: ${error instanceof Error ? error.message : String(error)}`);
        outcome = refusalOutcome(
          {
            action_id: typeof doc.action_id === "string" ? doc.action_id : "unknown",
            action_hash: typeof doc.action_hash === "string" && /^sha256:[0-9a-f]{64}$/.test(doc.action_hash) ? doc.action_hash : `sha256:${"0".repeat(64)}`,
            capability: { id: doc.action?.capability?.id ?? "unknown", version: doc.action?.capability?.version ?? "0" },
          },
          this.context(),
          error,
        );
      }
      traceStage(traceId, "guest.ran");
      try {
        await this.deliver(delivered.id, outcome, deadline);
      } finally {
        this.afterDelivery(jobId, outcome);
      }
      traceStage(traceId, "guest.delivered");
      // A job that took a snapshot (a rw host path, a rollback's undo) changed what the hub may offer to
      // roll back to: it hears so now, not with the next periodic report up to half a minute later.
      if (typeof outcome.structured?.["snapshot_id"] === "string") await this.reportHealth().catch((e: unknown) => this.log(`health report failed: ${String(e)}`));
    } finally {
      clearInterval(beat);
      ran.abort();
    }
  }

  /** What the job left for after its result (a rollback's old tree): a failure is logged, the result stands. */
  private afterDelivery(jobId: string, outcome: JobOutcome): void {
    try {
      outcome.afterDelivery?.();
    } catch (error) {
      this.log(`job ${jobId}: after delivery: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /**
   * Keeps the hub's stop watch open while a job runs (docs/design.md#cancel):
   * the hub answers it the moment the action is cancelled, so the lease dies
   * in milliseconds, not at the next heartbeat. A watch that fails costs only
   * that latency: heartbeats carry the stop too.
   */
  private async watchForStop(jobId: string, stop: AbortController, ran: AbortSignal): Promise<void> {
    const signal = AbortSignal.any([ran, this.stop.signal, stop.signal]);
    let attempt = 0;
    while (!signal.aborted) {
      try {
        const res = await this.client.request("GET", `/api/agent/jobs/${encodeURIComponent(jobId)}/stop?wait=20000`, undefined, { signal, timeoutMs: 35_000 });
        const answer = HeartbeatAnswer.safeParse(res.body).data;
        if (answer?.stop === true) {
          this.log(`job ${jobId}: the hub asked to stop it; killing its lease`);
          stop.abort();
          return;
        }
        // Not this host's running job any more, or a hub without the watch: heartbeats go on.
        if (res.status !== 200 || answer === undefined || !answer.alive) return;
        attempt = 0;
      } catch {
        if (signal.aborted) return;
        await sleep(backoffMs(attempt, HEARTBEAT_EVERY_MS), signal);
        attempt += 1;
      }
    }
  }

  /** Output chunks first, then the envelope and result; retried until stored or the deadline passes. */
  private async deliver(jobId: string, outcome: JobOutcome, deadline: number): Promise<void> {
    const streams: Record<string, { chunks: number; bytes: number }> = {};
    for (const name of ["stdout", "stderr"] as const) {
      const bytes = outcome.streams[name];
      let seq = 0;
      for (let off = 0; off < bytes.length; off += OUTPUT_CHUNK_BYTES) {
        const data = bytes.subarray(off, off + OUTPUT_CHUNK_BYTES).toString("base64");
        const n = seq;
        await this.deliverStep(`output of ${jobId}`, () => this.client.request("POST", `/api/agent/jobs/${jobId}/output`, { stream: name, seq: n, data }), deadline);
        seq += 1;
      }
      streams[name] = { chunks: seq, bytes: bytes.length };
    }
    await this.deliverStep(
      `result of ${jobId}`,
      () => this.client.request("POST", `/api/agent/jobs/${jobId}/result`, { kind: outcome.kind, evidence: outcome.evidence, streams, structured: outcome.structured, error: outcome.error }),
      deadline,
    );
  }

  private async deliverStep(what: string, fn: () => Promise<unknown>, deadline: number): Promise<void> {
    for (let attempt = 0; Date.now() < deadline; attempt += 1) {
      try {
        await fn();
        return;
      } catch (error) {
        if (error instanceof HubError && !error.transient) {
          this.log(`${what} refused by the hub: ${error.message}`);
          return;
        }
        if (attempt % 10 === 0) this.log(`${what}: ${error instanceof Error ? error.message : String(error)}; retrying`);
        await sleep(backoffMs(attempt));
      }
    }
    this.log(`${what}: gave up at the job deadline`);
  }
}
