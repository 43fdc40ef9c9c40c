/**
 * The guest's read of a job's input artifact:
 * `GET /api/agent/jobs/<id>/artifact?offset=N&length=N`. A host may read an
 * artifact only through a job of its own that is claimed and not finished,
 * and only the artifact that job's prepared action names
 * (`arguments.artifact`, covered by action_hash and the job signature) — so
 * a host can never fetch bytes by hash, nor after its job ended.
 */
import { and, eq } from "drizzle-orm";
import { MAX_READ_BYTES, readArtifactRange } from "../artifacts";
import type { Database } from "../db";
import { jobs } from "../db/schema";
import { LeaseholdError } from "../errors";
import type { AuthenticatedHost } from "../hosts/auth";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;
const DECIMAL = /^(?:0|[1-9][0-9]{0,15})$/;

export interface ArtifactRange {
  sha256: string;
  /** The whole artifact's size. */
  bytes: number;
  offset: number;
  data: Buffer;
}

function decimalParameter(params: URLSearchParams, name: string): number {
  const values = params.getAll(name);
  const value = values.length === 1 ? values[0] : undefined;
  if (value === undefined || !DECIMAL.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new LeaseholdError("INVALID_ARGUMENT", `${name} must be given once, as a whole number in decimal`, { tier: "hub" });
  }
  return Number(value);
}

/** The `{sha256, bytes}` a job's prepared action names, or undefined. */
function artifactOf(payload: unknown): { sha256: string; bytes: number } | undefined {
  const ref = (payload as { action?: { arguments?: { artifact?: { sha256?: unknown; bytes?: unknown } } } } | null)?.action?.arguments?.artifact;
  if (ref === undefined || typeof ref.sha256 !== "string" || !SHA256_HEX.test(ref.sha256) || typeof ref.bytes !== "number") return undefined;
  return { sha256: ref.sha256, bytes: ref.bytes };
}

export async function readJobArtifact(db: Database, host: AuthenticatedHost, jobId: string, params: URLSearchParams): Promise<ArtifactRange> {
  if (!UUID.test(jobId)) throw new LeaseholdError("NOT_FOUND", "no such job for this host", { tier: "hub" });
  const [job] = await db.select({ state: jobs.state, payload: jobs.payload }).from(jobs).where(and(eq(jobs.id, jobId), eq(jobs.hostId, host.id)));
  // Another host's job reads exactly like no job: nothing about it leaks.
  if (job === undefined) throw new LeaseholdError("NOT_FOUND", "no such job for this host", { tier: "hub" });
  if (job.state !== "claimed") {
    throw new LeaseholdError("FORBIDDEN", `job ${jobId} is ${job.state}; its artifact is served only while the job is claimed and running`, { tier: "hub" });
  }
  const ref = artifactOf(job.payload);
  if (ref === undefined) throw new LeaseholdError("NOT_FOUND", `job ${jobId}'s action names no artifact`, { tier: "hub" });
  const offset = decimalParameter(params, "offset");
  const length = decimalParameter(params, "length");
  if (offset >= ref.bytes) throw new LeaseholdError("INVALID_ARGUMENT", `offset ${offset} is past the artifact's ${ref.bytes} bytes (0..${ref.bytes - 1})`, { tier: "hub" });
  if (length < 1 || length > MAX_READ_BYTES) throw new LeaseholdError("INVALID_ARGUMENT", `length must be 1..${MAX_READ_BYTES}`, { tier: "hub" });
  const range = await readArtifactRange(db, ref.sha256, offset, length);
  if (range.bytes !== ref.bytes) throw new LeaseholdError("INTERNAL", "the stored artifact's size differs from the job's", { tier: "hub" });
  return { sha256: ref.sha256, bytes: ref.bytes, offset, data: range.data };
}
