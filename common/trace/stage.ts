/**
 * Stage timestamps for the fast-path bench. Off unless
 * LEASEHOLD_STAGE_TRACE names a file: then every process that records a
 * stage (hub, guest) appends one JSON line per stage to it —
 * `{"id": <action id>, "stage": <name>, "t": <epoch ms, µs resolution>, "pid"}`
 * plus, where given, this process's cumulative database counters. Lines are
 * short single `write`s to an O_APPEND descriptor, so processes never
 * interleave within a line. Only ids and counts are written, never content.
 *
 * The timestamps are taken on the real path (no subtraction): the bench
 * joins lines by action id and reports each stage's delta from the one
 * before it.
 */
import fs from "node:fs";

let fd: number | null | undefined;

function traceFd(): number | null {
  if (fd !== undefined) return fd;
  const file = process.env["LEASEHOLD_STAGE_TRACE"];
  fd = null;
  if (file !== undefined && file !== "") {
    try {
      fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT, 0o600);
    } catch {
      // A bench aid only: an unwritable trace file leaves tracing off.
      fd = null;
    }
  }
  return fd;
}

const COUNTERS_KEY = Symbol.for("leasehold.trace.db-counters");

/** This process's database counters when server/trace/db-counters.ts installed them (the hub's); undefined elsewhere. */
function processCounters(): Record<string, number> | undefined {
  const found = (globalThis as unknown as Record<symbol, Record<string, number> | undefined>)[COUNTERS_KEY];
  return found === undefined ? undefined : { ...found };
}

export function stageTraceEnabled(): boolean {
  return traceFd() !== null;
}

/** Wall-clock now in ms with sub-ms resolution, comparable across processes on one machine. */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

export function traceStage(id: string, stage: string, extra?: Record<string, number>): void {
  const out = traceFd();
  if (out === null) return;
  const counters = extra ?? processCounters();
  const line = JSON.stringify({ id, stage, t: Math.round(epochMs() * 1000) / 1000, pid: process.pid, ...(counters === undefined ? {} : { counters }) });
  try {
    fs.writeSync(out, `${line}\n`);
  } catch {
    // Never let a bench aid fail the path it observes.
  }
}
