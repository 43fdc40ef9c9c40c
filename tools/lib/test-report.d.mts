import type { AllowedSkip } from "./skip-allowlist.mjs";
export interface FileTime { runner: string; file: string; seconds: number }
export interface Skip { runner: string; file: string; name: string }
/** A failed test, or a file (or run) that failed outside its tests: `name` then says so, in parentheses. */
export interface Failure { runner: string; file: string; name: string }
export interface ReportReading { files: FileTime[]; skips: Skip[]; failures: Failure[] }
export function readVitestReport(report: unknown, base?: string): ReportReading;
export function readPlaywrightReport(report: unknown, base?: string): ReportReading;
export function checkSkips(skips: Skip[], allowList?: ReadonlyArray<AllowedSkip>, env?: Record<string, string | undefined>): { allowed: Array<Skip & { why: string }>; unexplained: Skip[] };
export function failureLines(reports: ReportReading[]): string[];
export function slowestFiles(files: FileTime[], count?: number): FileTime[];
export function summarise(reports: ReportReading[], env?: Record<string, string | undefined>): { lines: string[]; ok: boolean; allowed: Array<Skip & { why: string }>; unexplained: Skip[] };
