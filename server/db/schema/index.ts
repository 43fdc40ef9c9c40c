/**
 * The hub's PostgreSQL schema: one folder, one file per domain, every table
 * listed here. Migrations in drizzle/ are generated from it and never edited
 * after they land; a change here ships as a new migration.
 *
 * Timestamps are `timestamptz`. Secrets never appear here in the clear: tokens
 * and session ids are stored as SHA-256 digests.
 */
export { bytea } from "./columns";
export { adminUsers, adminSessions, passkeyCredentials, webauthnChallenges } from "./admins";
export { agentTokens, mcpSessions } from "./agents";
export { hosts, capabilities, hostEnrolmentCodes, hostRequestNonces } from "./hosts";
export { actions, approvals, grants, leases, jobs, evidence, jobOutputChunks, mcpTasks } from "./pipeline";
export { ledgerEntries, ledgerLog, ledgerWitnesses, ledgerNodes, ledgerCheckpoints, ledgerCosignatures } from "./ledger";
export { artifactBlobs, artifactChunks, artifactUploads } from "./artifacts";
export { oauthClients, oauthAuthorizations, oauthTokens, hubSettings } from "./oauth";
export { hubIdentity, limitBuckets, limitWindows, limitInFlight, limitHolders } from "./replicas";
export { pushSubscriptions } from "./push";
