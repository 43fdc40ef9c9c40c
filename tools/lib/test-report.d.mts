import type { AllowedSkip } from "./skip-allowlist.mjs";
export interface FileTime { runner: string; file: string; seconds: number }
export interface Skip { runner: string; file: string; name: string }
export interface ReportReading { files: FileTime[]; skips: Skip[] }
export function readVitestReport(report: unknown, base?: string): ReportReading;
export function readPlaywrightReport(report: unknown, base?: string): ReportReading;
export function checkSkips(skips: Skip[], allowList?: ReadonlyArray<AllowedSkip>, env?: Record<string, string | undefined>): { allowed: Array<Skip & { why: string }>; unexplained: Skip[] };
export function slowestFiles(files: FileTime[], count?: number): FileTime[];
export function summarise(reports: ReportReading[], env?: Record<string, string | undefined>): { lines: string[]; ok: boolean; allowed: Array<Skip & { why: string }>; unexplained: Skip[] };
