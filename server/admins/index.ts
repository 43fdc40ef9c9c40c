// Public surface of server/admins. See README.md.
export {
  ADMIN_NAME_PATTERN,
  changeOwnPassword,
  checkAdminPassword,
  createAdmin,
  disableAdmin,
  findAdminByName,
  listAdmins,
  requireActiveAdmin,
  resetAdminPassword,
  setAdminRole,
  signIn,
} from "./admins";
export type { AdminActor, AdminRecord } from "./admins";
export { ARGON2_PARAMS, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, hashPassword, needsRehash, passwordProblem, verifyPassword } from "./passwords";
export { ADMIN_ROLES, ROLES, adminRoleSchema } from "./roles";
export type { AdminRole } from "./roles";
export {
  ADMIN_SESSION_COOKIE,
  REAUTH_MS,
  SECURE_ADMIN_SESSION_COOKIE,
  SESSION_ABSOLUTE_MS,
  SESSION_BINDING_HEADER,
  SESSION_IDLE_MS,
  SESSION_REFUSAL_TEXT,
  authenticateAdminSession,
  checkAdminSession,
  checkSessionToken,
  blankSessionCookie,
  createAdminSession,
  invalidateSession,
  invalidateUserSessions,
  markReauthenticated,
  pageShellSession,
  recentlyReauthenticated,
  sessionCookie,
  sessionCookieName,
  sessionCookieSecure,
  sessionIdOf,
  sessionTokenFrom,
  validateSessionToken,
} from "./sessions";
export type { AdminSession, NewAdminSession, SessionCheck, SessionRefusal } from "./sessions";
export {
  ADDRESS_UNKNOWN_NAMES_ALLOWED,
  GOOD_ADDRESS_MS,
  PAIR_FAILURES_ALLOWED,
  SESSION_FAILURES_ALLOWED,
  SignInThrottle,
  USER_FAILURES_ALLOWED,
  WINDOW_MS,
  signInThrottle,
} from "./throttle";
