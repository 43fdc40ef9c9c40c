import { getHubRuntime } from "~/server/hub/runtime";
import { serveHostKey } from "~/server/hosts/host-key";

export const dynamic = "force-dynamic";

/** A host's evidence key and the ledger entry that sealed it, for an agent token (server/hosts/host-key.ts). */
export async function GET(request: Request, context: { params: Promise<{ id: string }> }): Promise<Response> {
  const { id } = await context.params;
  return serveHostKey((await getHubRuntime()).database.handle.db, request, id);
}
