/**
 * The compiled addon and helper as TypeScript sees them: where they are, the
 * raw shapes the addon returns, loading it once, and the small conversions
 * every other module of the launcher shares (numbers, errno names, the
 * UNENFORCEABLE error). Internal to native/: importers use index.ts.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { constants as osConstants } from "node:os";
import { join } from "node:path";
import { LeaseholdError } from "../server/trust";
import { projectPath } from "../common/paths/index";

// Found from the checkout root, not from this file: the guest also runs
// compiled into dist/, where a path relative to the module would miss.
const releaseDir = projectPath("native", "build", "Release");
export const HELPER_PATH = join(releaseDir, "leasehold-sandbox");

/** A post-run cgroup counter; null when it could not be read (then listed in `unread`). */
export type NativeCounter = number | bigint | null;
export type NativeCounterName = "oomKill" | "memoryFailcnt" | "memoryMaxUsage" | "pidsEventsMax" | "cpuNrPeriods" | "cpuNrThrottled" | "cpuThrottledNs";
export interface NativeCgroup extends Record<NativeCounterName, NativeCounter> {
  memoryPath: string; pidsPath: string; cpuPath: string; v2Path: string; v2Id: number | bigint; hierarchy: "v1" | "v2";
  memoryLimit: number | bigint; memswLimit: number | bigint; pidsMax: number | bigint;
  cpuQuotaUs: number | bigint; cpuPeriodUs: number | bigint;
  /** the counters that could not be read: file, line (null: the whole file) and errno */
  unread: { counter: NativeCounterName; file: string; key: string | null; errno: number }[];
  withdrawnEmpty: boolean; withdrawnRemoved: boolean;
}
export interface NativeResult {
  failed: boolean; failStage: string; failErrno: number; failMessage: string; execErrno: number;
  reportedExit: boolean; exitCode: number; termSignal: number; timedOut: boolean; cancelled: boolean; helperStatus: number;
  stdout: Buffer; stdoutTotal: number; stderr: Buffer; stderrTotal: number; readback: string;
  bpf: { enforced: boolean; withdrawn: boolean; dropped: number | bigint; denials: NativeDenial[] };
  sandboxPid: number; wallMs: number; setupMs: number; cpuUserMs: number; cpuSysMs: number; cgroup: NativeCgroup;
}
export interface NativeAddon {
  launch(req: {
    helper: string; leaseId: string; config: Buffer; stdin: Buffer; stdoutMax: number; stderrMax: number;
    timeoutMs: number; memoryBytes: number; pidsMax: number; cpuQuotaUs: number; cpuPeriodUs: number;
    onProgress?: (stdoutTotal: number | bigint, stderrTotal: number | bigint) => void; progressEveryMs: number;
    faultUnreadable?: string;
    netEgress: boolean;
    bpf?: { exec: Buffer; egress: Buffer; execEnforced: boolean; netEnforced: boolean };
    /** Registers the launch under its lease id so `cancelLaunch` can stop it. */
    cancellable?: boolean;
  }): Promise<NativeResult>;
  /** Kills a cancellable launch's lease cgroup (launch.h `cancel_fd`); false when no such launch is running. */
  cancelLaunch(leaseId: string): boolean;
  bpfStatus(maxTier?: string): { tier: string; objectSha256: string; detail: string };
  bpfAbi(): { rule: number; file: number };
  bpfProgramStats(): { name: string; runCnt: number | bigint; runTimeNs: number | bigint }[];
  bpfLeaseAdd(spec: { cgroupPath: string; cgroupId: bigint; exec: Buffer; egress: Buffer; execEnforced: boolean; netEnforced: boolean }): object;
  bpfLeaseWithdraw(handle: object): { denials: NativeDenial[]; dropped: number | bigint };
  landlockAbi(): number;
  seccompAvailable(): boolean;
  /** renameat2(dirFd, a, dirFd, b, RENAME_EXCHANGE); single-component names; 0 or the errno. */
  renameExchangeAt(dirFd: number, a: string, b: string): number;
  sweepStaleLeases(): NativeSweep;
  leaseOwnerPrefix(): string;
  cgroupMode(): { mode: "v1" | "v2" | ""; why: string };
}
export interface NativeDenial {
  kind: number; pid: number; family: number; proto: number; port: number; addr: Buffer;
  dev: number | bigint; ino: number | bigint; comm: string;
}
export interface NativeSweep {
  removed: number; killed: number; liveOwn: number; liveOther: number; foreign: number;
  failures: { path: string; reason: string }[];
}

let addon: NativeAddon | undefined;
export function loadAddon(): NativeAddon {
  if (!addon) {
    const file = join(releaseDir, "leasehold_native.node");
    if (!existsSync(file) || !existsSync(HELPER_PATH)) {
      throw new LeaseholdError("UNENFORCEABLE", "sandbox launcher is not built; run `node native/build.mjs`", {
        tier: "guest",
      });
    }
    addon = createRequire(import.meta.url)(file) as NativeAddon;
  }
  return addon;
}

export const num = (v: number | bigint): number => (typeof v === "bigint" ? Number(v) : v);
export const counter = (v: NativeCounter): number | null => (v === null ? null : num(v));

const errnoNames = new Map<number, string>(Object.entries(osConstants.errno).map(([k, v]) => [v, k]));
export const signalNames = new Map<number, string>(Object.entries(osConstants.signals).map(([k, v]) => [v, k]));
export const errnoName = (n: number): string => errnoNames.get(n) ?? `errno ${n}`;

export function unenforceable(reason: string, details?: Record<string, unknown>): LeaseholdError {
  return new LeaseholdError("UNENFORCEABLE", `sandbox: ${reason}`, { tier: "guest", ...(details ? { details } : {}) });
}
