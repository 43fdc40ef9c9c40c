// Public surface of server/passkeys. See README.md.
export {
  APPROVAL_CHALLENGE_DOMAIN,
  approvalChallenge,
  approvalChallengeBase64Url,
  approvalChallengeText,
  assertionDigest,
  GRANT_CHALLENGE_DOMAIN,
  freshNonce,
  fromBase64Url,
  grantChallenge,
  grantChallengeBase64Url,
  grantChallengeText,
  needsPasskey,
  passkeyKeyDigest,
  toBase64Url,
} from "./challenge";
export type { StoredAssertion } from "./challenge";
export {
  CHALLENGE_TTL_MS,
  PASSKEY_NAME_MAX,
  approvalOptions,
  grantOptions,
  listPasskeys,
  passkeyAvailability,
  registerPasskey,
  registrationOptions,
  removeAllPasskeys,
  removePasskey,
  signInOptions,
  signInWithPasskey,
  verifyApprovalAssertion,
  verifyGrantAssertion,
} from "./passkeys";
export type { PasskeyListing, RegistrationCeremony } from "./passkeys";
export { adminUrlFor, ceremonyFor, isIpAddress, isLoopbackHost, passkeySettingsOf, relyingParty } from "./relying-party";
export type { PasskeySettings, RelyingParty } from "./relying-party";
