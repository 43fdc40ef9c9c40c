/**
 * `npx tsx server/trust/scrub/bench/scrub.bench.ts` — prints figures, asserts nothing.
 *
 * 1. Coverage, same run, on the scrub corpus (server/trust/scrub/test/corpus.ts):
 *    the scrubber before the normalised view and the vendor formats (commit
 *    b67aaac), the scrubber before scrubbing across pages and spellings
 *    (f0b1247) — both loaded from git at those commits (scrubber-at-ref.ts) —
 *    the current scrubber, and @secretlint/core 13.0.7 with the
 *    recommended preset (lintSource on the case's text; "found" = at least
 *    one message). Then fs_read pages: every offset and page size (1–64)
 *    over each positive row, a page scrubbed alone (main) against a page
 *    cut from its scrubbed window (current); "leaked" = the page holds six
 *    consecutive bytes of a secret the whole-text scrub redacts.
 * 2. Throughput over 64 KiB chunks of four inputs, beside a plain Buffer copy
 *    of the same chunks: the baseline scrubber, the current one, and
 *    secretlint's lintSource on each 64 KiB chunk (a bounded window; on
 *    BENCH_SECRETLINT_MB of the input, default 4, as it is far slower):
 *   - log text with a credential every ~64 KiB,
 *   - log text dense with near-miss prefixes (AKIA, eyJ, Bearer, postgres://),
 *   - log text with colour codes on every line (the normalising path),
 *   - random binary.
 * BENCH_MB sets the input size (default 64).
 */
import { lintSource } from "@secretlint/core";
import { creator as recommended } from "@secretlint/secretlint-rule-preset-recommend";
import { Scrubber } from "../scrubber";
import { scrubberAtRef } from "./scrubber-at-ref";
import { scrubWindow, windowContext } from "../window";
import type { RedactionSpan } from "../scrubber";
import { ALL_CASES, FAKE, FAKE12 } from "../test/corpus";
import { reportBench, type BenchFigure } from "../../../../tools/lib/bench-report";

interface Pushes {
  push(b: Buffer): Buffer;
  end(): Buffer;
  report(): { count: number };
}
type Make = (dlp?: unknown) => Pushes;
const current: Make = (dlp) => new Scrubber(dlp === undefined ? {} : { dlp });
const { Scrubber: BaselineScrubber } = await scrubberAtRef("b67aaac");
const { Scrubber: MainScrubber } = await scrubberAtRef("f0b1247");
const baseline: Make = (dlp) => new BaselineScrubber(dlp === undefined ? {} : { dlp });
const main: Make = (dlp) => new MainScrubber(dlp === undefined ? {} : { dlp });

const SL_CONFIG = { rules: [{ id: "@secretlint/secretlint-rule-preset-recommend", rule: recommended }] };
async function secretlintCount(text: string): Promise<number> {
  const r = await lintSource({ source: { content: text, filePath: "/stdout", contentType: "text" }, options: { config: SL_CONFIG, noPhysicFilePath: true } });
  return r.messages.length;
}

const MB = Number(process.env.BENCH_MB ?? 64);
const figures: BenchFigure[] = [];
const CHUNK = 64 * 1024;

function makeLog(size: number, every: number, inject: string[]): Buffer {
  const parts: string[] = [];
  let n = 0;
  let i = 0;
  let nextSecret = every;
  while (n < size) {
    let line = `2024-05-0${i % 9}T12:00:${String(i % 60).padStart(2, "0")}Z INFO worker-${i % 16} handled request id=${(i * 7919).toString(16)} path=/api/v1/items/${i} status=200 ms=${i % 97}\n`;
    if (n >= nextSecret) {
      line = `${inject[i % inject.length]}\n` + line;
      nextSecret += every;
    }
    parts.push(line);
    n += line.length;
    i++;
  }
  return Buffer.from(parts.join("")).subarray(0, size);
}

function chunks(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let o = 0; o < buf.length; o += CHUNK) out.push(buf.subarray(o, Math.min(buf.length, o + CHUNK)));
  return out;
}

function time(fn: () => number): { seconds: number; out: number } {
  const t = performance.now();
  const out = fn();
  return { seconds: (performance.now() - t) / 1000, out };
}

function run(name: string, engine: string, make: Make, input: Buffer, dlp?: unknown) {
  const cs = chunks(input);
  // Warm up both paths.
  for (let k = 0; k < 2; k++) {
    const s = make(dlp);
    for (const c of cs.slice(0, 64)) s.push(c);
    s.end();
  }
  const copy = time(() => {
    let n = 0;
    for (const c of cs) n += Buffer.from(c).length;
    return n;
  });
  let redactions = 0;
  const scrub = time(() => {
    const s = make(dlp);
    let n = 0;
    for (const c of cs) n += s.push(c).length;
    n += s.end().length;
    redactions = s.report().count;
    return n;
  });
  const mb = input.length / (1024 * 1024);
  const fmt = (x: number) => x.toFixed(0).padStart(8);
  console.log(
    `${name.padEnd(40)} ${engine.padEnd(10)} ${fmt(mb / scrub.seconds)} MB/s   copy ${fmt(mb / copy.seconds)} MB/s   ratio ${(copy.seconds / scrub.seconds * 100).toFixed(2).padStart(6)}%   redactions ${redactions}`,
  );
  figures.push({ name: `${engine} scrubber: ${name}`, value: mb / scrub.seconds, unit: "MB/s", baseline: `Buffer copy of the same chunks: ${name}`, ratio: copy.seconds / scrub.seconds });
}

async function runSecretlint(name: string, input: Buffer, mbLimit: number) {
  const cs = chunks(input.subarray(0, Math.min(input.length, mbLimit * 1024 * 1024)));
  await secretlintCount(cs[0]?.toString("latin1") ?? "");
  const t = performance.now();
  let found = 0;
  for (const c of cs) found += await secretlintCount(c.toString("latin1"));
  const seconds = (performance.now() - t) / 1000;
  const mb = cs.reduce((n, c) => n + c.length, 0) / (1024 * 1024);
  console.log(`${name.padEnd(40)} ${"secretlint".padEnd(10)} ${(mb / seconds).toFixed(1).padStart(8)} MB/s   (on ${mb.toFixed(0)} MiB, 64 KiB windows)   messages ${found}`);
  figures.push({ name: `secretlint: ${name}`, value: mb / seconds, unit: "MB/s" });
}

async function coverage() {
  const bytes = (v: string | Buffer) => (typeof v === "string" ? Buffer.from(v, "utf8") : v);
  const rows = { positive: ALL_CASES.filter((c) => c.count > 0), negative: ALL_CASES.filter((c) => c.count === 0) };
  const exact = (make: Make, c: (typeof ALL_CASES)[number]) => {
    const s = make();
    const out = Buffer.concat([s.push(bytes(c.input)), s.end()]);
    return out.equals(bytes(c.expect));
  };
  const touched = (make: Make, c: (typeof ALL_CASES)[number]) => {
    const s = make();
    s.push(bytes(c.input));
    s.end();
    return s.report().count > 0;
  };
  let slFound = 0;
  let slFalse = 0;
  const slMissed: string[] = [];
  for (const c of rows.positive) {
    if ((await secretlintCount(bytes(c.input).toString("latin1"))) > 0) slFound++;
    else slMissed.push(c.name);
  }
  for (const c of rows.negative) if ((await secretlintCount(bytes(c.input).toString("latin1"))) > 0) slFalse++;
  const line = (engine: string, ok: number, fp: number) => {
    console.log(`${engine.padEnd(22)} caught ${String(ok).padStart(3)} / ${rows.positive.length} positive rows   flagged ${String(fp).padStart(2)} / ${rows.negative.length} near-misses`);
    figures.push({ name: `coverage ${engine}: positive rows caught`, value: ok, unit: `of ${rows.positive.length}` });
    figures.push({ name: `coverage ${engine}: near-misses flagged`, value: fp, unit: `of ${rows.negative.length}` });
  };
  console.log(`coverage on the scrub corpus (${ALL_CASES.length} rows)`);
  line("baseline (b67aaac)", rows.positive.filter((c) => exact(baseline, c)).length, rows.negative.filter((c) => touched(baseline, c)).length);
  const missedBy = (make: Make) => rows.positive.filter((c) => !exact(make, c)).map((c) => c.name);
  line("main (f0b1247)", rows.positive.filter((c) => exact(main, c)).length, rows.negative.filter((c) => touched(main, c)).length);
  line("current", rows.positive.filter((c) => exact(current, c)).length, rows.negative.filter((c) => touched(current, c)).length);
  console.log(`main missed: ${missedBy(main).join("; ")}`);
  console.log(`current missed: ${missedBy(current).join("; ") || "(none)"}`);
  line("secretlint preset", slFound, slFalse);
  console.log(`secretlint missed: ${slMissed.join("; ")}`);
  console.log("");
}

function pages() {
  const bytes = (v: string | Buffer) => (typeof v === "string" ? Buffer.from(v, "utf8") : v);
  const context = windowContext();
  let total = 0;
  let leakedMain = 0;
  let leakedCurrent = 0;
  for (const c of ALL_CASES.filter((row) => row.count > 0)) {
    const file = bytes(c.input);
    const spans: RedactionSpan[] = [];
    const whole = new Scrubber({ onRedact: (sp) => spans.push(sp) });
    whole.push(file);
    whole.end();
    const secrets = spans.map((sp) => file.subarray(sp.start, sp.end).toString("latin1")).filter((t) => t.length >= 6);
    // Markers name their kind ("github" in [REDACTED:github_token]): they are taken out before looking.
    const unmarked = (page: string) => page.replace(/\[REDACTED:[a-z0-9_]+\]/g, "").replace(/\[\0R\0E\0D\0A\0C\0T\0E\0D\0:(?:\0[a-z0-9_])+\0\]/g, "");
    const leaks = (page: string) => secrets.some((t) => [...Array(t.length - 5).keys()].some((i) => unmarked(page).includes(t.slice(i, i + 6))));
    for (let offset = 0; offset < file.length; offset++) {
      for (let length = 1; length <= 64 && offset + length <= file.length; length++) {
        total++;
        const raw = file.subarray(offset, offset + length);
        const s = new MainScrubber();
        const alone = Buffer.concat([s.push(raw), s.end({ partial: offset + length < file.length })]).toString("latin1");
        if (leaks(alone)) leakedMain++;
        const from = Math.max(0, offset - context);
        const w = scrubWindow({ bytes: file.subarray(from, Math.min(file.length, offset + length + context)), from, offset, length, total: file.length });
        if (leaks(w.output.toString("latin1"))) leakedCurrent++;
      }
    }
  }
  console.log(`fs_read pages over the positive rows: ${total} (offset, size) pairs; leaked a secret run: main ${leakedMain}, current ${leakedCurrent}`);
  figures.push({ name: "fs_read pages leaking a secret run: main (page alone)", value: leakedMain, unit: `of ${total}` });
  figures.push({ name: "fs_read pages leaking a secret run: current (window)", value: leakedCurrent, unit: `of ${total}` });
  console.log("");
}

const size = MB * 1024 * 1024;
const secrets = [FAKE.awsId, FAKE.ghp, FAKE.jwt, `postgres://u:pw@h/db`, `Bearer ${FAKE.lh}`, FAKE.skLive, FAKE12.openaiProj, FAKE12.npm];
const nearMisses = ["AKIA is a prefix", "eyJ alone", "Bearer x", "postgres://h:5432/db", "lh_x", "-----BEGIN CERTIFICATE-----"];
const random = Buffer.alloc(size);
for (let i = 0; i < size; i += 4) random.writeUInt32LE((Math.imul(i, 2654435761) ^ (i >>> 7)) >>> 0, i);

const coloured = (() => {
  const log = makeLog(size, 64 * 1024, secrets).toString("latin1").split("\n");
  return Buffer.from(log.map((l, i) => (i % 2 === 0 ? `\x1b[32m${l}\x1b[0m` : l)).join("\n"), "latin1").subarray(0, size);
})();
// The normaliser's slow path: backslashes and the first bytes of possible invisible characters.
const jsonLines = Buffer.from(
  makeLog(size, 64 * 1024, secrets)
    .toString("latin1")
    .split("\n")
    .map((l, i) => JSON.stringify({ msg: `${l} caf\u00e9 \u2014 \u201cok\u201d`, path: `C:\\logs\\${i}` }).replace("\u2014", "\\u2014"))
    .join("\n"),
  "utf8",
).subarray(0, size);
const base64Blob = Buffer.from(random.subarray(0, Math.floor((size * 3) / 4)).toString("base64").replace(/(.{76})/g, "$1\n")).subarray(0, size);
const inputs: Array<[string, Buffer]> = [
  ["log text, a secret every 64 KiB", makeLog(size, 64 * 1024, secrets)],
  ["log text, near-miss prefixes every 512 B", makeLog(size, 512, nearMisses)],
  ["log text, colour codes on every other line", coloured],
  ["random binary", random],
  ["JSON lines: \\u escapes, UTF-8 punctuation", jsonLines],
  ["base64 of random bytes (76-column lines)", base64Blob],
];
const dlp = [
  { name: "ssn", pattern: "\\b\\d{3}-\\d{2}-\\d{4}\\b" },
  { name: "customer_id", pattern: "CUST-[0-9]{6}", flags: "i" },
];

await coverage();
pages();
console.log(`scrubber throughput, ${MB} MiB input, ${CHUNK / 1024} KiB chunks, node ${process.version}`);
for (const [name, input] of inputs) {
  run(name, "baseline", baseline, input);
  run(name, "main", main, input);
  run(name, "current", current, input);
  await runSecretlint(name, input, Number(process.env.BENCH_SECRETLINT_MB ?? 4));
}
run("log text + 2 DLP patterns", "baseline", baseline, inputs[0]![1], dlp);
run("log text + 2 DLP patterns", "main", main, inputs[0]![1], dlp);
run("log text + 2 DLP patterns", "current", current, inputs[0]![1], dlp);
reportBench("scrub", { input_mib: MB, chunk_kib: CHUNK / 1024, node: process.version }, figures);
