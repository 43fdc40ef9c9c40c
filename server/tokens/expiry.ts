/**
 * `--expires` values: a positive count of seconds, minutes, hours or days
 * (`300s`, `90m`, `12h`, `30d`), or the word `never`, which must be said explicitly — a
 * token is never immortal by default.
 */
import { DAY_MS, parseDurationMs } from "../time/duration";

export type ExpiryParse = { ok: true; expiresAt: Date | null } | { ok: false; message: string };

const MAX_DAYS = 3650;

export function parseExpiry(value: string | undefined, now: Date): ExpiryParse {
  if (value === undefined) {
    return { ok: false, message: "--expires is required: say how long the token lives (e.g. 30d, 12h, 90m, 300s) or --expires never" };
  }
  if (value === "never") return { ok: true, expiresAt: null };
  const ms = parseDurationMs(value);
  if (ms === undefined) return { ok: false, message: `--expires ${JSON.stringify(value)} is not a duration: use e.g. 30d, 12h, 90m, 300s, or never` };
  if (ms > MAX_DAYS * DAY_MS) return { ok: false, message: `--expires ${value} is longer than ${MAX_DAYS} days; use --expires never if that is what you mean` };
  return { ok: true, expiresAt: new Date(now.getTime() + ms) };
}
