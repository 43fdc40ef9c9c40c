import { getHubRuntime } from "~/server/hub/runtime";
import { bodyRefusalResponse, jsonObjectOf, readBoundedBody } from "~/server/http/body";
import { receiveCosignature } from "~/server/ledger/http";

export const dynamic = "force-dynamic";

/** A cosignature is `{size, line}`: a few hundred bytes. */
const MAX_COSIGNATURE_BODY_BYTES = 4096;

export async function POST(request: Request): Promise<Response> {
  // Read through the bounded reader first: the handler below reads the whole body it is given.
  const body = await readBoundedBody(request, MAX_COSIGNATURE_BODY_BYTES);
  if (!body.ok) return bodyRefusalResponse(body);
  const object = jsonObjectOf(body.value);
  if (!object.ok) return bodyRefusalResponse(object);
  return receiveCosignature(await getHubRuntime(), new Request(request.url, { method: "POST", headers: { "content-type": "application/json" }, body: body.value }));
}
