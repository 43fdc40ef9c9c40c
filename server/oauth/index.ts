// Public surface of server/oauth: the hub as its own OAuth 2.1 authorization server. See README.md.
export { beginAuthorization, decideAuthorization, DEFAULT_GRANT_LIFETIME_S, GRANT_LIFETIMES_S } from "./authorize";
export type { AdminIdentity, BeginResult, Decision, OAuthContext, PendingAuthorization } from "./authorize";
export { DYNAMIC_REGISTRATION_WINDOW_MS, DYNAMIC_REGISTRATIONS_PER_ADDRESS, findClient, listOAuthClients, MAX_DYNAMIC_CLIENTS, registerClientByAdmin, removeOAuthClient } from "./clients";
export type { ClientKind, OAuthClient } from "./clients";
export { adminHostOf, oauthContext } from "./context";
export { authorizationServerResponse, handleRegistrationRequest, handleRevocationRequest, handleTokenRequest, preflight, protectedResourceResponse } from "./http";
export { authorizationServerMetadata, challengeParams, mcpResourceUrl, protectedResourceMetadata, protectedResourceMetadataUrl } from "./metadata";
export { CHALLENGE_SCOPE, parseScopeParam, SCOPE_MEANING, SCOPE_READ, SCOPE_WRITE, scopesOf, SUPPORTED_SCOPES } from "./scopes";
export type { OAuthScope } from "./scopes";
export { DEFAULT_OAUTH_SETTINGS, getOAuthSettings, setOAuthSettings } from "./settings";
export type { OAuthSettings } from "./settings";
export { ACCESS_TOKEN_TTL_S, exchangeCode, refreshGrant, revokeOAuthToken } from "./token-service";
export { listedStatus, unredeemedGrants } from "./unredeemed";
export type { ListedTokenStatus } from "./unredeemed";
