import type { HubRuntime } from "../hub/runtime";
import { LeaseholdError, toErrorPayload, ERROR_CODES } from "../errors";
import { submitCosignature } from "./cosignatures";
import { latestCheckpoint, pinnedLogIdentity, proveConsistency, proveInclusion, withCosignatures } from "./prove";

/**
 * The ledger's public HTTP surface, as plain Request → Response functions
 * so app/ route files stay one line each. Everything here is public by
 * design: entries hold only digests, checkpoints and proofs are meant to be
 * checked by anyone, and a cosignature authenticates itself.
 */

function errorResponse(error: unknown): Response {
  const payload = toErrorPayload(error);
  return Response.json(payload, { status: ERROR_CODES[payload.code].http });
}

function nonNegativeInt(value: string | null, name: string, required: boolean): number | undefined {
  if (value === null || value === "") {
    if (required) throw new LeaseholdError("INVALID_ARGUMENT", `query parameter ${name} is required`);
    return undefined;
  }
  if (!/^(0|[1-9][0-9]{0,15})$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new LeaseholdError("INVALID_ARGUMENT", `query parameter ${name} must be a non-negative integer`);
  }
  return Number(value);
}

export async function serveLogKey(runtime: HubRuntime): Promise<Response> {
  const pinned = await pinnedLogIdentity(runtime.database.handle.db);
  return new Response(`${pinned?.verifier ?? runtime.ledger.key.verifier}\n`, {
    headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
  });
}

/** The newest checkpoint as a C2SP signed note, with every stored cosignature appended. */
export async function serveCheckpoint(runtime: HubRuntime): Promise<Response> {
  try {
    const db = runtime.database.handle.db;
    const head = await latestCheckpoint(db);
    if (!head) throw new LeaseholdError("NOT_FOUND", "the log has no checkpoint yet", { tier: "ledger" });
    const note = await withCosignatures(db, head.size, head.note);
    return new Response(note, { headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" } });
  } catch (error) {
    return errorResponse(error);
  }
}

export async function serveInclusionProof(runtime: HubRuntime, url: URL): Promise<Response> {
  try {
    const index = nonNegativeInt(url.searchParams.get("index"), "index", true)!;
    const size = nonNegativeInt(url.searchParams.get("size"), "size", false);
    return Response.json(await proveInclusion(runtime.database.handle.db, index, size));
  } catch (error) {
    return errorResponse(error);
  }
}

export async function serveConsistencyProof(runtime: HubRuntime, url: URL): Promise<Response> {
  try {
    const from = nonNegativeInt(url.searchParams.get("from"), "from", true)!;
    const to = nonNegativeInt(url.searchParams.get("to"), "to", false);
    return Response.json(await proveConsistency(runtime.database.handle.db, from, to));
  } catch (error) {
    return errorResponse(error);
  }
}

export async function receiveCosignature(runtime: HubRuntime, request: Request): Promise<Response> {
  try {
    const text = await request.text();
    if (text.length > 4096) throw new LeaseholdError("INVALID_ARGUMENT", "cosignature request too large");
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new LeaseholdError("INVALID_ARGUMENT", "body must be JSON {size, line}");
    }
    const { size, line } = (body ?? {}) as { size?: unknown; line?: unknown };
    if (typeof size !== "number" || typeof line !== "string") throw new LeaseholdError("INVALID_ARGUMENT", "body must be JSON {size: number, line: string}");
    const result = await submitCosignature(runtime.database.handle.db, size, line);
    return Response.json({ accepted: true, ...result });
  } catch (error) {
    return errorResponse(error);
  }
}
