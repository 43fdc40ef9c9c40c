/**
 * RFC 7591 dynamic client registration: the request body checked against
 * the same rules as a Client ID Metadata Document. Issuing the id, storing
 * the client and the admin's on/off switch are the coordinator's
 * (server/oauth); this only says whether the request is acceptable and
 * which RFC 7591 §3.2.2 error to answer with when it is not.
 */
import { checkClientMetadata, type ClientMetadata, type MetadataError } from "./metadata";

/**
 * RFC 7591 request body → metadata to store (public clients only:
 * token_endpoint_auth_method must be absent or "none"; no redirect URI on
 * `adminHost`, the host name the hub's admin pages are served from).
 */
export function validateRegistrationRequest(
  body: unknown,
  adminHost: string,
): { ok: true; metadata: Omit<ClientMetadata, "clientId"> } | { ok: false; error: MetadataError; description: string } {
  return checkClientMetadata(body, null, adminHost);
}
