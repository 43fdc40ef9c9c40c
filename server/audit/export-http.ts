import { ROLES, SESSION_REFUSAL_TEXT, checkAdminSession, sessionCookieSecure } from "../admins";
import { ERROR_CODES, LeaseholdError, toErrorPayload } from "../errors";
import type { HubRuntime } from "../hub/runtime";
import { ledgerExportStream } from "../ledger/export";

/**
 * GET /api/audit/export: the ledger export file (`leasehold-ledger-export/1`,
 * byte for byte what `leasehold ledger export` writes and `leasehold verify`
 * reads), streamed. A route handler, not a tRPC query, because the file can
 * be large — so it authenticates here exactly like roleProcedure(ROLES.readers):
 * no session → 401, a one-time password not yet replaced or a role outside
 * readers → 403. A GET, and it changes nothing.
 */
export async function serveAuditExport(runtime: HubRuntime, request: Request): Promise<Response> {
  try {
    const db = runtime.database.handle.db;
    const check = await checkAdminSession(db, request.headers, { secure: sessionCookieSecure(runtime.config) });
    if (!check.ok) throw new LeaseholdError("UNAUTHENTICATED", SESSION_REFUSAL_TEXT[check.reason], { tier: "hub" });
    const session = check.session;
    if (session.mustChangePassword) throw new LeaseholdError("FORBIDDEN", "replace your one-time password first", { tier: "hub", hint: "open /change-password" });
    if (!(ROLES.readers as readonly string[]).includes(session.role)) {
      throw new LeaseholdError("FORBIDDEN", `your role (${session.role}) may not do this; it needs ${ROLES.readers.join(" or ")}`, { tier: "hub" });
    }
    const stream = await ledgerExportStream(db, runtime.ledger.key);
    const encoder = new TextEncoder();
    const lines = stream.lines;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        // Batch small chunks into ~256 KiB writes.
        let out = "";
        while (out.length < 1 << 18) {
          const next = await lines.next();
          if (next.done === true) {
            if (out !== "") controller.enqueue(encoder.encode(out));
            controller.close();
            return;
          }
          out += next.value;
        }
        controller.enqueue(encoder.encode(out));
      },
      async cancel() {
        await lines.return(undefined);
      },
    });
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    return new Response(body, {
      headers: {
        "content-type": "application/x-ndjson; charset=utf-8",
        "content-disposition": `attachment; filename="leasehold-ledger-${stamp}.jsonl"`,
        "cache-control": "no-store",
        // For the browser's progress bar only; the verifier counts for itself.
        "x-leasehold-entries": String(stream.entryCount),
      },
    });
  } catch (error) {
    const payload = toErrorPayload(error);
    return Response.json(payload, { status: ERROR_CODES[payload.code].http, headers: { "cache-control": "no-store" } });
  }
}
