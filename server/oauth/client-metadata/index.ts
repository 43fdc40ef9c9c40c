// Client metadata for the hub's OAuth server: Client ID Metadata Documents
// (fetch with an SSRF guard, cache), RFC 7591 registration requests, and
// redirect URI rules. See README.md.
export { ClientMetadataCache } from "./cache";
export { isClientIdUrl } from "./client-id";
export { fetchClientMetadataDocument } from "./fetch";
export type { FetchOptions } from "./fetch";
export type { ClientMetadata, MetadataResult } from "./metadata";
export { checkClientName, MAX_CLIENT_NAME_LENGTH, mixesScripts, nameWarnings } from "./client-name";
export type { ClientNameCheck } from "./client-name";
export { checkRedirectUriHost, redirectUriMatches, validateRedirectUri } from "./redirect-uri";
export { validateRegistrationRequest } from "./registration";
