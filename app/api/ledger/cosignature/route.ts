import { getHubRuntime } from "../../../../server/hub/runtime";
import { receiveCosignature } from "../../../../server/ledger/http";

export const dynamic = "force-dynamic";

export async function POST(request: Request): Promise<Response> {
  return receiveCosignature(await getHubRuntime(), request);
}
