import { parseDurationMs } from "../time/duration";
import { UsageError } from "./io";

// The flag parser both executables share is common/cli/args.ts; `--expires`
// parsing stays here because durations are the hub's (server/time).
export { NO_POSITIONALS, commaList, parseCommandArgs, requireFlag, splitSubcommand } from "../../common/cli/args";
export type { Positionals } from "../../common/cli/args";

/** `--expires`: a duration (`30m`, `2h`, `7d`, see server/time/duration.ts) from `now`, or an ISO-8601 time. */
export function parseExpiry(text: string, now = Date.now()): Date {
  const ms = parseDurationMs(text);
  if (ms !== undefined) return new Date(now + ms);
  const parsed = Date.parse(text);
  if (Number.isNaN(parsed)) throw new UsageError(`--expires ${JSON.stringify(text)} is neither a duration (30m, 2h, 7d) nor an ISO time`);
  return new Date(parsed);
}
