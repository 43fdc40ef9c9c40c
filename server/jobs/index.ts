// Public surface of server/jobs. See README.md.
export { CLAIM_WAIT_MS, HEARTBEAT_INTERVAL_MS, HEARTBEAT_LOST_MS, OFFER_ACK_MS, ackJob, beat, heartbeat, nextJob, sweepJobs } from "./delivery";
export { dropUnclaimedJob, requestStop, stopWasRequested } from "./stop";
export { DEFAULT_OUTPUT_QUOTAS, pruneExpiredOutput, readJobOutput, receiveJobResult, receiveOutputChunk } from "./intake";
export type { OutputQuotas, StoredCompletion } from "./intake";
export { serveAck, serveArtifact, serveHeartbeat, serveNextJob, serveOutput, serveResult } from "./http";
export { startJobServices } from "./service";
export type { JobServices } from "./service";
export { notifyJobQueued } from "./wake";
export type { OutputProgress } from "./wake";
export { HOSTS_CHANNEL, announce, listenForHostWakeups } from "./notify";
