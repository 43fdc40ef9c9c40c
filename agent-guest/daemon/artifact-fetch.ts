/**
 * Fetches a job's input artifact from the hub into an open file (the
 * hub's artifact route, server/jobs/artifact.ts). The guest never names the artifact by a path or a name:
 * it asks for "the artifact of job <id>" in ranges and writes the bytes to a
 * descriptor the caller opened (inside the sandbox's workdir, mode of its
 * choosing). Every range must carry the artifact's SHA-256 and size the
 * signed job named; the whole is re-hashed before this returns, so a file
 * that was fetched is exactly the one action_hash covers.
 */
import { createHash } from "node:crypto";
import { write } from "node:fs";
import { promisify } from "node:util";
import { LeaseholdError, isErrorCode } from "../../server/trust";
import { backoffMs, HubError, sleep, type HubClient } from "./client";

const writeAt = promisify(write);

/** Bytes per request: the route's limit. */
export const ARTIFACT_FETCH_RANGE_BYTES = 4 * 1024 * 1024;
/** Attempts per range for transient failures (network, 5xx, 429) before HOST_UNAVAILABLE. */
const ATTEMPTS = 4;

function mismatch(message: string): LeaseholdError {
  return new LeaseholdError("INVALID_ARGUMENT", `artifact fetch: ${message}`, { tier: "guest" });
}

async function writeAll(fd: number, data: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < data.length) {
    const { bytesWritten } = await writeAt(fd, data, done, data.length - done, position + done);
    if (bytesWritten <= 0) throw new LeaseholdError("INTERNAL", "artifact fetch: the file took no bytes", { tier: "guest" });
    done += bytesWritten;
  }
}

/** One range, retried on transient failures; hub refusals keep their code (NOT_FOUND, FORBIDDEN, ...). */
async function fetchRange(client: HubClient, jobId: string, offset: number, length: number, options: { signal?: AbortSignal }): Promise<{ headers: Headers; bytes: Buffer }> {
  const path = `/api/agent/jobs/${encodeURIComponent(jobId)}/artifact?offset=${offset}&length=${length}`;
  let last: unknown;
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    if (attempt > 0) await sleep(backoffMs(attempt - 1, 2_000), options.signal);
    if (options.signal?.aborted) break;
    try {
      return await client.requestBytes(path, { maxBytes: length, timeoutMs: 60_000, ...(options.signal === undefined ? {} : { signal: options.signal }) });
    } catch (error) {
      last = error;
      if (error instanceof HubError && !error.transient) {
        const code = error.payload?.code;
        throw new LeaseholdError(isErrorCode(code) ? code : "INVALID_ARGUMENT", `artifact fetch: ${error.message}`, { tier: "guest" });
      }
      if (error instanceof HubError && error.status === 502 && error.payload?.code === "INVALID_ARGUMENT") throw mismatch(error.payload.message ?? "oversized answer");
    }
  }
  const reason = last instanceof Error ? last.message : "aborted";
  throw new LeaseholdError("HOST_UNAVAILABLE", `artifact fetch: the hub could not be reached for bytes ${offset}..${offset + length} of job ${jobId}'s artifact (${reason})`, { tier: "guest", retryable: true });
}

/**
 * Writes the artifact of `jobId` (`ref` as the signed job names it) to `fd`
 * from offset 0, checking each range's headers and length and the whole's
 * byte count and SHA-256. INVALID_ARGUMENT on any mismatch, NOT_FOUND when
 * the hub has no such artifact for this job, HOST_UNAVAILABLE when the hub
 * stays unreachable after retries.
 */
export async function fetchJobArtifact(client: HubClient, jobId: string, ref: { sha256: string; bytes: number }, fd: number, options: { signal?: AbortSignal } = {}): Promise<void> {
  if (!/^[0-9a-f]{64}$/.test(ref.sha256) || !Number.isSafeInteger(ref.bytes) || ref.bytes < 1) throw mismatch("the job names a malformed artifact reference");
  const hash = createHash("sha256");
  let offset = 0;
  while (offset < ref.bytes) {
    const length = Math.min(ARTIFACT_FETCH_RANGE_BYTES, ref.bytes - offset);
    const { headers, bytes } = await fetchRange(client, jobId, offset, length, options);
    if (headers.get("x-leasehold-artifact-sha256") !== ref.sha256 || headers.get("x-leasehold-artifact-bytes") !== String(ref.bytes)) {
      throw mismatch(`the hub served a different artifact (${headers.get("x-leasehold-artifact-sha256") ?? "no sha256"}, ${headers.get("x-leasehold-artifact-bytes") ?? "no size"}) than the job names (${ref.sha256}, ${ref.bytes})`);
    }
    if (bytes.length !== length) throw mismatch(`asked for ${length} bytes at offset ${offset}, got ${bytes.length}`);
    await writeAll(fd, bytes, offset);
    hash.update(bytes);
    offset += bytes.length;
  }
  const actual = hash.digest("hex");
  if (actual !== ref.sha256) throw mismatch(`the fetched bytes hash to ${actual}, not ${ref.sha256}`);
}
