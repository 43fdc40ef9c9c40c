/**
 * The request header that carries an admin session's binding secret
 * (server/admins/sessions.ts). A leaf with no imports: the browser bundle
 * imports it too. Never a cookie: the secret must not travel on its own.
 */
export const SESSION_BINDING_HEADER = "x-leasehold-session-binding";
