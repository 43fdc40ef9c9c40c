/**
 * The client metadata both registration paths share (RFC 7591 §2 fields, as
 * a Client ID Metadata Document carries them too), checked once here so a
 * fetched document and a registration request can never be held to
 * different rules. Public clients only: the hub issues no client secrets,
 * so anything that asks for or carries one is refused rather than ignored.
 */
import { z } from "zod";
import { checkClientName } from "./client-name";
import { checkRedirectUriHost, MAX_REDIRECT_URIS, validateRedirectUri } from "./redirect-uri";

export interface ClientMetadata {
  /** The URL (CIMD) or the issued id (registration). */
  clientId: string;
  /** client_name, or the URL's host when absent. */
  name: string;
  /** Validated, exactly as given. */
  redirectUris: string[];
  clientUri: string | null;
  logoUri: string | null;
  /** The document / request as received, minus anything secret, for display and audit. */
  raw: Record<string, unknown>;
}

export type MetadataResult = { ok: true; metadata: ClientMetadata; maxAgeS: number } | { ok: false; reason: string };

export type MetadataError = "invalid_redirect_uri" | "invalid_client_metadata";

export type CheckedMetadata = { ok: true; metadata: Omit<ClientMetadata, "clientId"> } | { ok: false; error: MetadataError; description: string };

const MAX_URI_LENGTH = 2048;

/** The grant and response types the hub serves (authorization code with refresh); a client asking for others is refused. */
const SUPPORTED_GRANT_TYPES = new Set(["authorization_code", "refresh_token"]);

const FieldsSchema = z.looseObject({
  client_name: z.string().optional(),
  client_uri: z.string().optional(),
  logo_uri: z.string().optional(),
  token_endpoint_auth_method: z.string().optional(),
  grant_types: z.array(z.string()).optional(),
  response_types: z.array(z.string()).optional(),
  scope: z.string().optional(),
});

const RedirectUrisSchema = z.array(z.string()).min(1).max(MAX_REDIRECT_URIS);

function invalid(error: MetadataError, description: string): CheckedMetadata {
  return { ok: false, error, description };
}

/** An https URL shown or linked on the consent page. */
function checkDisplayUri(field: string, value: string): string | null {
  if (value.length > MAX_URI_LENGTH) return `${field} is longer than ${MAX_URI_LENGTH} characters`;
  if (!/^[\x21-\x7e]+$/.test(value) || value.includes("\\")) return `${field} contains whitespace, control or non-ASCII characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${field} is not an absolute URL`;
  }
  if (url.protocol !== "https:") return `${field} must be an https URL`;
  if (url.username !== "" || url.password !== "") return `${field} has userinfo`;
  return null;
}

/** The host a client is named by when it gives no client_name (for a private-use scheme, the scheme). */
export function hostForName(uri: string): string | null {
  try {
    const url = new URL(uri);
    return url.host !== "" ? url.host : url.protocol.slice(0, -1);
  } catch {
    return null;
  }
}

/**
 * Checks client metadata (a parsed JSON value) and returns what the hub
 * stores. `fallbackName` names the client when it sends no client_name
 * (null: take the host of client_uri, else of the first redirect URI).
 * `adminHost` is the host name the hub's admin pages are served from: no
 * redirect URI may be on it (`checkRedirectUriHost`). Null only for a
 * Client ID Metadata Document, whose fetched result is cached apart from
 * any one hub configuration: the authorization server checks its redirect
 * URIs when a request names it.
 */
export function checkClientMetadata(input: unknown, fallbackName: string | null, adminHost: string | null): CheckedMetadata {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return invalid("invalid_client_metadata", "client metadata must be a JSON object");
  }
  const raw = input as Record<string, unknown>;
  const secrets = Object.keys(raw).filter((k) => k.startsWith("client_secret"));
  if (secrets.length > 0) {
    return invalid("invalid_client_metadata", `public clients only: ${secrets.join(", ")} must not be present`);
  }

  const uris = RedirectUrisSchema.safeParse(raw.redirect_uris);
  if (!uris.success) {
    return invalid("invalid_redirect_uri", `redirect_uris must be an array of 1 to ${MAX_REDIRECT_URIS} strings`);
  }
  for (const uri of uris.data) {
    const check = validateRedirectUri(uri);
    if (!check.ok) return invalid("invalid_redirect_uri", `${JSON.stringify(uri.slice(0, 200))}: ${check.reason}`);
    const host = adminHost === null ? ({ ok: true } as const) : checkRedirectUriHost(uri, adminHost);
    if (!host.ok) return invalid("invalid_redirect_uri", `${JSON.stringify(uri.slice(0, 200))}: ${host.reason}`);
  }

  const parsed = FieldsSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? issue.path.join(".") : "metadata";
    return invalid("invalid_client_metadata", `${where}: ${issue?.message ?? "invalid"}`);
  }
  const fields = parsed.data;

  if (fields.token_endpoint_auth_method !== undefined && fields.token_endpoint_auth_method !== "none") {
    return invalid("invalid_client_metadata", `public clients only: token_endpoint_auth_method must be "none" or absent, not ${JSON.stringify(fields.token_endpoint_auth_method)}`);
  }
  if (fields.grant_types !== undefined) {
    const unsupported = fields.grant_types.filter((g) => !SUPPORTED_GRANT_TYPES.has(g));
    if (unsupported.length > 0) return invalid("invalid_client_metadata", `unsupported grant_types: ${unsupported.join(", ")}`);
    if (!fields.grant_types.includes("authorization_code")) return invalid("invalid_client_metadata", "grant_types must include authorization_code");
  }
  if (fields.response_types !== undefined) {
    if (fields.response_types.length === 0 || fields.response_types.some((t) => t !== "code")) {
      return invalid("invalid_client_metadata", 'response_types must be ["code"]');
    }
  }

  let name: string | null = null;
  if (fields.client_name !== undefined) {
    const checkedName = checkClientName(fields.client_name);
    if (!checkedName.ok) return invalid("invalid_client_metadata", checkedName.reason);
    name = checkedName.name;
  }
  for (const field of ["client_uri", "logo_uri"] as const) {
    const value = fields[field];
    if (value === undefined) continue;
    const problem = checkDisplayUri(field, value);
    if (problem !== null) return invalid("invalid_client_metadata", problem);
  }

  const firstRedirect = uris.data[0] as string;
  name ??= fallbackName ?? (fields.client_uri !== undefined ? hostForName(fields.client_uri) : null) ?? hostForName(firstRedirect) ?? "unnamed client";
  return {
    ok: true,
    metadata: {
      name,
      redirectUris: [...uris.data],
      clientUri: fields.client_uri ?? null,
      logoUri: fields.logo_uri ?? null,
      raw: structuredClone(raw),
    },
  };
}
