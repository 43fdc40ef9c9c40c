// Public surface of server/tokens. Listed by name; see README.md.
export {
  ACCESS_TOKEN_PREFIX,
  REFRESH_TOKEN_PREFIX,
  TOKEN_PREFIX,
  TOKEN_RANDOM_BYTES,
  digestsEqual,
  generateAccessToken,
  generateRefreshToken,
  generateTokenSecret,
  hashTokenSecret,
  looksLikeAccessToken,
  looksLikeRefreshToken,
  looksLikeToken,
} from "./secret";
export { parseExpiry } from "./expiry";
export type { ExpiryParse } from "./expiry";
export { authenticateToken, checkAccessRow, checkObserveScope, checkTokenRow, createToken, fromRow, listTokens, normaliseScope, scopeDigest, tokenStatus } from "./store";
export { revokeToken } from "./revocation";
export type { RevocationEffects } from "./revocation";
export type { AgentToken, CreateTokenInput, CreateTokenOptions, TokenCheck, TokenScope, TokenStatus } from "./store";
