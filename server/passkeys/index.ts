// Public surface of server/passkeys. See README.md.
export {
  APPROVAL_CHALLENGE_DOMAIN,
  approvalChallenge,
  approvalChallengeBase64Url,
  approvalChallengeText,
  assertionDigest,
  freshNonce,
  fromBase64Url,
  needsPasskey,
  passkeyKeyDigest,
  toBase64Url,
} from "./challenge";
export type { StoredAssertion } from "./challenge";
export {
  CHALLENGE_TTL_MS,
  PASSKEY_NAME_MAX,
  approvalOptions,
  listPasskeys,
  passkeyAvailability,
  registerPasskey,
  registrationOptions,
  removePasskey,
  signInOptions,
  signInWithPasskey,
  verifyApprovalAssertion,
} from "./passkeys";
export type { PasskeyListing } from "./passkeys";
export { adminUrlFor, ceremonyFor, isIpAddress, isLoopbackHost, passkeySettingsOf, relyingParty } from "./relying-party";
export type { PasskeySettings, RelyingParty } from "./relying-party";
