/**
 * Machine-readable figures for `npm run bench` (tools/bench.mjs).
 *
 * Benches keep printing their own tables for people; this only writes JSON,
 * and only when LEASEHOLD_BENCH_JSON names a file. A bench run by hand
 * without it is unaffected.
 */
import fs from "node:fs";
import path from "node:path";
import { LeaseholdError } from "../../server/trust/leasehold-error";

export interface BenchFigure {
  name: string;
  value: number;
  unit: string;
  /** The same-run baseline `ratio` was taken against, by name. */
  baseline?: string;
  /** value ÷ baseline (or the inverse where the bench's printed ratio says so; the name tells). */
  ratio?: number;
  /** The goal from the issue this figure answers, as words (never asserted). */
  goal?: string;
}

export interface BenchReport {
  bench: string;
  meta: Record<string, unknown>;
  figures: BenchFigure[];
  /** ISO-8601 time of the report. */
  at: string;
}

/**
 * Every report this process wrote, per file. A second report from the same
 * process turns the file into a JSON array of all of them; a report from an
 * earlier process (a stale file) is replaced, not appended to, so a file
 * only ever holds one run.
 */
const written = new Map<string, BenchReport[]>();

function checkFigure(bench: string, figure: BenchFigure): void {
  // A NaN or Infinity would serialise as null and read later as a real zero-ish figure.
  const numbers: Array<[string, number | undefined]> = [["value", figure.value], ["ratio", figure.ratio]];
  for (const [field, n] of numbers) {
    if (n !== undefined && !Number.isFinite(n)) {
      throw new LeaseholdError("INVALID_ARGUMENT", `bench ${bench}: figure "${figure.name}" has a non-finite ${field} (${String(n)})`, {
        hint: "measure at least one sample before reporting, or leave the figure out",
      });
    }
  }
  if (figure.ratio !== undefined && figure.baseline === undefined) {
    throw new LeaseholdError("INVALID_ARGUMENT", `bench ${bench}: figure "${figure.name}" has a ratio but names no baseline`, {
      hint: "name the same-run baseline the ratio was taken against",
    });
  }
}

export function reportBench(bench: string, meta: Record<string, unknown>, figures: BenchFigure[]): void {
  const target = process.env.LEASEHOLD_BENCH_JSON;
  if (target === undefined || target === "") return;
  for (const figure of figures) checkFigure(bench, figure);
  const file = path.resolve(target);
  const report: BenchReport = { bench, meta, figures, at: new Date().toISOString() };
  const reports = [...(written.get(file) ?? []), report];
  const body = JSON.stringify(reports.length === 1 ? reports[0] : reports, null, 2) + "\n";
  // Write beside and rename: a reader (tools/bench.mjs after a crash) never sees half a file.
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, body);
  fs.renameSync(temporary, file);
  written.set(file, reports);
}
