// Public surface of server/admins. See README.md.
export { ADMIN_NAME_PATTERN, SCRYPT_PARAMS, createAdmin, findAdminByName, hashPassword, requireActiveAdmin, verifyPassword } from "./admins";
export type { AdminRecord } from "./admins";
export { ADMIN_SESSION_COOKIE, authenticateAdminSession, createAdminSession } from "./sessions";
