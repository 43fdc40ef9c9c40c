import { CHALLENGE_SCOPE, SUPPORTED_SCOPES } from "./scopes";

/**
 * Discovery documents. The hub is both the protected resource (/api/mcp)
 * and its own authorization server; the issuer is the public URL exactly
 * (no path), so RFC 8414's well-known URL is at the root.
 */

/** The canonical URL of the MCP endpoint: every OAuth token's audience (RFC 8707 resource). */
export function mcpResourceUrl(publicUrl: string): string {
  return `${publicUrl}/api/mcp`;
}

export function protectedResourceMetadataUrl(publicUrl: string): string {
  return `${publicUrl}/.well-known/oauth-protected-resource`;
}

/** RFC 9728 metadata for /api/mcp. */
export function protectedResourceMetadata(publicUrl: string): Record<string, unknown> {
  return {
    resource: mcpResourceUrl(publicUrl),
    authorization_servers: [publicUrl],
    scopes_supported: [...SUPPORTED_SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "Leasehold hub",
    resource_documentation: `${publicUrl}/`,
  };
}

/** RFC 8414 metadata. `registration_endpoint` only while dynamic registration is on. */
export function authorizationServerMetadata(publicUrl: string, options: { dynamicRegistration: boolean }): Record<string, unknown> {
  return {
    issuer: publicUrl,
    authorization_endpoint: `${publicUrl}/oauth/authorize`,
    token_endpoint: `${publicUrl}/api/oauth/token`,
    ...(options.dynamicRegistration ? { registration_endpoint: `${publicUrl}/api/oauth/register` } : {}),
    revocation_endpoint: `${publicUrl}/api/oauth/revoke`,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    // Public clients only: PKCE is the proof of possession; the hub keeps no client secrets.
    token_endpoint_auth_methods_supported: ["none"],
    revocation_endpoint_auth_methods_supported: ["none"],
    scopes_supported: [...SUPPORTED_SCOPES],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${publicUrl}/`,
  };
}

/** `WWW-Authenticate` parameters every challenge from /api/mcp carries. */
export function challengeParams(publicUrl: string): string {
  return `resource_metadata="${protectedResourceMetadataUrl(publicUrl)}", scope="${CHALLENGE_SCOPE}"`;
}
