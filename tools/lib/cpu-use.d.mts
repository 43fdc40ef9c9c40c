export interface MachineCpu { busy: number; total: number }
export function machineCpu(text?: string): MachineCpu;
export function busyShare(before: MachineCpu, after: MachineCpu): number;
export function processCpu(text?: string): { self: number; children: number };
export interface CpuFile { file: string; self: number; children: number; cpu: number }
export function readCpuLog(text: string, count?: number): { total: number; files: number; unreadable: number; top: CpuFile[] };
