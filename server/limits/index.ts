export { takeToken, bucketSize, pruneBuckets } from "./buckets";
export type { BucketShape, RateDecision } from "./buckets";
export { windowWaitSeconds, windowFail, windowClear, markNow, isMarked, pruneWindows } from "./windows";
export { acquireInFlight, renewHolder, renewInFlight, countInFlight, IN_FLIGHT_LEASE_MS, PROCESS_HOLDER } from "./in-flight";
export { startLimitSweep } from "./sweep";
