/**
 * Durations as operators type them on the command line: a positive count of
 * seconds, minutes, hours or days (`300s`, `90m`, `12h`, `30d`). One grammar
 * for every `--expires` (tokens, grants) so the same text means the same
 * thing everywhere.
 */
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

export const DURATION_EXAMPLES = "30d, 12h, 90m, 300s";

/** Milliseconds, or undefined when `text` is not a duration. */
export function parseDurationMs(text: string): number | undefined {
  const match = /^([1-9]\d{0,7})([smhd])$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

export const DAY_MS = UNIT_MS.d;
