// Public surface of server/dispatch. See README.md.
export { JOB_KEY_FILE, generateJobKey, loadOrCreateJobKey } from "./job-key";
export type { JobKey } from "./job-key";
export { DEFAULT_FAIR_SHARE, JOB_SCHEMA, claimJob, signJob, verifyJob } from "./jobs";
export type { ClaimedJob, FairShare, JobDocument, SignedJob } from "./jobs";
