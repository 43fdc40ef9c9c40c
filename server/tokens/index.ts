// Public surface of server/tokens. Listed by name; see README.md.
export { TOKEN_PREFIX, TOKEN_RANDOM_BYTES, digestsEqual, generateTokenSecret, hashTokenSecret, looksLikeToken } from "./secret";
export { parseExpiry } from "./expiry";
export type { ExpiryParse } from "./expiry";
export { authenticateToken, checkTokenRow, createToken, listTokens, tokenStatus } from "./store";
export { TOKEN_REVOKED_MESSAGE, revokeToken } from "./revocation";
export type { RevocationEffects } from "./revocation";
export type { AgentToken, CreateTokenInput, CreateTokenOptions, TokenCheck, TokenScope, TokenStatus } from "./store";
