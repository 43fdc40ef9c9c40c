/**
 * The guest-facing HTTP surface for hosts themselves (`app/api/agent/enrol`,
 * `app/api/agent/health`) and the signed-request reading every guest route
 * shares (server/jobs/http.ts serves the job routes with it), as Request →
 * Response functions so the route files stay one line each. Guests connect out to
 * the hub; nothing here calls a host. Every route but enrolment requires a
 * signed request (auth.ts); the body is read once through the bounded
 * reader (server/http/body.ts: 413 past MAX_AGENT_BODY_BYTES, 400 for
 * anything but a JSON object) and its exact bytes are what the signature
 * covers.
 */
import { ERROR_CODES, LeaseholdError, toErrorPayload } from "../errors";
import { loadOrCreateJobKey, type JobKey } from "../dispatch/job-key";
import type { HubRuntime } from "../hub/runtime";
import { pinnedLogIdentity } from "../ledger/prove";
import { keyDirOf } from "../hub/identity";
import { authenticateHostRequest, type AuthenticatedHost, type PendingNonce } from "./auth";
import { enrolHost, type EnrolRequest } from "./enrolment";
import { storeHealthReport } from "./health";
import { BodyRefusedError, bodyRefusalResponse, jsonObjectOf, readBoundedBody } from "../http/body";
import { HEADER_PEER, MAX_AGENT_BODY_BYTES } from "../trust/protocol";

const jobKeys = new WeakMap<HubRuntime, JobKey>();
function jobKeyOf(runtime: HubRuntime): JobKey {
  let key = jobKeys.get(runtime);
  if (key === undefined) {
    key = loadOrCreateJobKey(keyDirOf(runtime.config));
    jobKeys.set(runtime, key);
  }
  return key;
}

function errorResponse(error: unknown): Response {
  if (error instanceof BodyRefusedError) return bodyRefusalResponse(error.refusal);
  const payload = toErrorPayload(error);
  return Response.json(payload, { status: ERROR_CODES[payload.code].http });
}

/** The body's exact bytes (what the signature covers), read through the bounded reader. */
async function readBody(request: Request): Promise<Uint8Array> {
  const body = await readBoundedBody(request, MAX_AGENT_BODY_BYTES);
  if (!body.ok) throw new BodyRefusedError(body);
  return body.value;
}

/** A JSON object, or `null` for an empty body (routes whose body is optional); anything else is a 400. */
function parseJson(bytes: Uint8Array): Record<string, unknown> | null {
  const parsed = jsonObjectOf(bytes, { optional: true });
  if (!parsed.ok) throw new BodyRefusedError(parsed);
  return parsed.value ?? null;
}

/**
 * A signed guest request: the body read through the bounded reader, the
 * signature verified over its exact bytes (401 otherwise), then the body
 * parsed. `deferNonce` leaves recording the nonce to the caller's transaction.
 */
export async function authenticated(runtime: HubRuntime, request: Request, options: { deferNonce?: boolean } = {}): Promise<{ host: AuthenticatedHost; body: unknown; pendingNonce?: PendingNonce }> {
  const body = await readBody(request);
  const url = new URL(request.url);
  const result = await authenticateHostRequest(
    runtime.database.handle.db,
    { method: request.method, pathAndQuery: `${url.pathname}${url.search}`, headers: request.headers, body },
    Date.now(),
    options,
  );
  if (!result.ok) throw new LeaseholdError("UNAUTHENTICATED", `host request refused: ${result.reason}`, { tier: "hub" });
  return { host: result.host, body: parseJson(body), ...(result.pendingNonce === undefined ? {} : { pendingNonce: result.pendingNonce }) };
}

/** Runs a route, answering any error with its stable code and HTTP status (a refused body with 413/400). */
export async function handle(fn: () => Promise<Response>): Promise<Response> {
  try {
    return await fn();
  } catch (error) {
    return errorResponse(error);
  }
}

/** POST /api/agent/enrol — the only unsigned route: the one-time code is the credential. */
export function serveEnrol(runtime: HubRuntime, request: Request): Promise<Response> {
  return handle(async () => {
    const parsed = jsonObjectOf(await readBody(request));
    if (!parsed.ok) throw new BodyRefusedError(parsed);
    const body = parsed.value as unknown as EnrolRequest;
    const db = runtime.database.handle.db;
    const result = await enrolHost(db, body);
    const pinned = await pinnedLogIdentity(db);
    return Response.json({
      ...result,
      hub: { job_key: jobKeyOf(runtime).publicKeyPem, log_key: pinned?.verifier ?? runtime.ledger.key.verifier },
    });
  });
}

export function serveHealthReport(runtime: HubRuntime, request: Request): Promise<Response> {
  return handle(async () => {
    const { host, body } = await authenticated(runtime, request);
    await storeHealthReport(runtime.database.handle.db, host, body, { peer: request.headers.get(HEADER_PEER) });
    return Response.json({ stored: true, host_id: host.id, name: host.name });
  });
}
