/**
 * The guest-facing job routes (`app/api/agent/jobs/*`): long-poll, ack, heartbeat,
 * stop watch, output, artifact and result, as Request → Response functions so the route
 * files stay one line each. Every one is a signed request, read and checked
 * by server/hosts/http.ts `authenticated` before anything here acts.
 */
import { LeaseholdError } from "../errors";
import type { HubRuntime } from "../hub/runtime";
import { authenticated, handle } from "../hosts/http";
import { HeartbeatBody } from "../trust/protocol";
import { readJobArtifact } from "./artifact";
import { ackJob, beat, nextJob } from "./delivery";
import { receiveJobResult, receiveOutputChunk } from "./intake";
import { listenForHostWakeups } from "./notify";
import { watchForStop } from "./stop";

/** GET /api/agent/jobs?wait=MS — long-poll: 200 {job} or 204 when none arrived in time. */
export function serveNextJob(runtime: HubRuntime, request: Request): Promise<Response> {
  return handle(async () => {
    const { host } = await authenticated(runtime, request);
    const wait = Number(new URL(request.url).searchParams.get("wait") ?? "0");
    await listenForHostWakeups(runtime.database.handle);
    const job = await nextJob(runtime.database.handle.db, host.id, Number.isFinite(wait) ? wait : 0, request.signal, { perCallerSlots: runtime.config.jobs.slotsPerToken });
    if (job === null) return new Response(null, { status: 204 });
    return Response.json({ job: { id: job.id, document: job.document, signature: job.signature } });
  });
}

/** POST /api/agent/jobs/<id>/ack — the guest takes an offered job before it runs it (delivery.ts `ackJob`). */
export function serveAck(runtime: HubRuntime, request: Request, jobId: string): Promise<Response> {
  return handle(async () => {
    const { host } = await authenticated(runtime, request);
    return Response.json(await ackJob(runtime.database.handle.db, host.id, jobId));
  });
}

export function serveHeartbeat(runtime: HubRuntime, request: Request, jobId: string): Promise<Response> {
  return handle(async () => {
    const { host, body } = await authenticated(runtime, request);
    const parsed = HeartbeatBody.safeParse(body ?? {});
    if (!parsed.success) throw new LeaseholdError("INVALID_ARGUMENT", `heartbeat: ${parsed.error.issues.map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ")}`, { tier: "hub" });
    return Response.json(await beat(runtime.database.handle.db, host.id, jobId, parsed.data.output));
  });
}

/** GET /api/agent/jobs/<id>/stop?wait=MS — the running job's stop watch (stop.ts `watchForStop`). */
export function serveStopWatch(runtime: HubRuntime, request: Request, jobId: string): Promise<Response> {
  return handle(async () => {
    const { host } = await authenticated(runtime, request);
    const wait = Number(new URL(request.url).searchParams.get("wait") ?? "0");
    await listenForHostWakeups(runtime.database.handle);
    return Response.json(await watchForStop(runtime.database.handle.db, host.id, jobId, Number.isFinite(wait) ? wait : 0, request.signal));
  });
}

export function serveOutput(runtime: HubRuntime, request: Request, jobId: string): Promise<Response> {
  return handle(async () => {
    const { host, body } = await authenticated(runtime, request);
    return Response.json(await receiveOutputChunk(runtime.database.handle.db, host, jobId, body, { tokenBytes: runtime.config.output.quotaTokenBytes, hostBytes: runtime.config.output.quotaHostBytes }));
  });
}

/**
 * GET /api/agent/jobs/<id>/artifact?offset=N&length=N — raw bytes of the
 * artifact this claimed job's action names, with its
 * SHA-256 and whole size in headers so the guest checks every range.
 */
export function serveArtifact(runtime: HubRuntime, request: Request, jobId: string): Promise<Response> {
  return handle(async () => {
    const { host } = await authenticated(runtime, request);
    const range = await readJobArtifact(runtime.database.handle.db, host, jobId, new URL(request.url).searchParams);
    return new Response(new Uint8Array(range.data), {
      status: 200,
      headers: {
        "content-type": "application/octet-stream",
        "content-length": String(range.data.length),
        "cache-control": "no-store",
        "x-leasehold-artifact-sha256": range.sha256,
        "x-leasehold-artifact-bytes": String(range.bytes),
      },
    });
  });
}

export function serveResult(runtime: HubRuntime, request: Request, jobId: string): Promise<Response> {
  return handle(async () => {
    // The nonce is recorded in the transaction that stores the result (intake.ts), not in one of its own.
    const { host, body, pendingNonce } = await authenticated(runtime, request, { deferNonce: true });
    return Response.json(await receiveJobResult(runtime.database.handle.db, host, jobId, body, pendingNonce));
  });
}
