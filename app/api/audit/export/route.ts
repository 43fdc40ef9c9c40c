import { serveAuditExport } from "~/server/audit/export-http";
import { getHubRuntime } from "~/server/hub/runtime";

export const dynamic = "force-dynamic";

/** The ledger export for the audit explorer; authenticates and checks the role itself (see serveAuditExport). */
export async function GET(request: Request): Promise<Response> {
  return serveAuditExport(await getHubRuntime(), request);
}
