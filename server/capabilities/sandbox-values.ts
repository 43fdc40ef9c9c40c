/**
 * Parsers for the scalar sandbox values a manifest spells as strings
 * ("512m", "0.5"). Each returns `undefined` for anything it does not accept, so
 * callers fail closed instead of guessing what an odd spelling meant.
 */

const KIB = 1024;
const MIB = 1024 * KIB;
const GIB = 1024 * MIB;

/** Bounds for `sandbox.memory`: below 16 MiB nothing useful starts; 64 GiB is a host, not a sandbox. */
export const MEMORY_BOUNDS = { min: 16 * MIB, max: 64 * GIB } as const;
/** Bounds for `sandbox.tmpfs_tmp` (tmpfs pages count against the cgroup's memory). */
export const TMPFS_BOUNDS = { min: 1 * MIB, max: 16 * GIB } as const;
/** Bounds for `sandbox.cpus`, in thousandths of a CPU. */
export const CPU_MILLIS_BOUNDS = { min: 10, max: 64_000 } as const;
export const PIDS_BOUNDS = { min: 1, max: 32_768 } as const;
export const TIMEOUT_S_BOUNDS = { min: 1, max: 86_400 } as const;

const SIZE_PATTERN = /^([1-9][0-9]{0,5})([kmg])$/;
const SIZE_UNIT: Record<string, number> = { k: KIB, m: MIB, g: GIB };

/**
 * Parses a size string in the container-runtime spelling (binary units,
 * lower-case `k`, `m` or `g`, no leading zeros, no fractions): "512m" is
 * 536870912 bytes. Plain byte counts and upper-case units are refused so one
 * value has exactly one spelling — manifests are hashed and diffed.
 */
export function parseSizeToBytes(text: string): number | undefined {
  const match = SIZE_PATTERN.exec(text);
  if (match === null) return undefined;
  const [, digits, unit] = match;
  if (digits === undefined || unit === undefined) return undefined;
  const multiplier = SIZE_UNIT[unit];
  if (multiplier === undefined) return undefined;
  const bytes = Number(digits) * multiplier;
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

const CPUS_PATTERN = /^(0|[1-9][0-9]?)(?:\.([0-9]{1,3}))?$/;

/**
 * Parses `sandbox.cpus` ("1", "0.5", "2.25") into thousandths of a CPU, the
 * integer unit the compiled policy carries (cgroup v2 `cpu.max` wants integers,
 * and the signed job must not contain floats whose JCS spelling could vary).
 */
export function parseCpusToMillis(text: string): number | undefined {
  const match = CPUS_PATTERN.exec(text);
  if (match === null) return undefined;
  const whole = Number(match[1]);
  const fraction = match[2] === undefined ? 0 : Number(match[2].padEnd(3, "0"));
  return whole * 1000 + fraction;
}

/**
 * An absolute directory in canonical form: starts with "/", no empty, "." or
 * ".." segments, no trailing slash (except "/" itself), no NUL or newline.
 * Canonical spelling matters: allow-lists are compared as strings by the
 * guest, so "/usr//bin" and "/usr/bin/" must not slip in as distinct entries.
 */
export function isCanonicalAbsoluteDir(text: string): boolean {
  if (text === "/") return true;
  if (!text.startsWith("/") || text.endsWith("/") || text.length > 4096) return false;
  if (text.includes("\u0000") || text.includes("\n") || text.includes("\r")) return false;
  return text
    .slice(1)
    .split("/")
    .every((segment) => segment !== "" && segment !== "." && segment !== "..");
}
