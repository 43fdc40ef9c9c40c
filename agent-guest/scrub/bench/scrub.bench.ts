/**
 * `npx tsx agent-guest/scrub/bench/scrub.bench.ts` — prints figures, asserts nothing.
 *
 * Throughput of the streaming scrubber (all built-in patterns, plus a run with
 * two DLP patterns) over 64 KiB chunks of three inputs, beside a plain Buffer
 * copy of the same chunks measured in the same run as the baseline:
 *   - log text with a credential every ~64 KiB,
 *   - log text dense with near-miss prefixes (AKIA, eyJ, Bearer, postgres://),
 *   - random binary.
 * BENCH_MB sets the input size (default 64).
 */
import { Scrubber } from "../scrubber";
import { FAKE } from "../test/corpus";

const MB = Number(process.env.BENCH_MB ?? 64);
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

function run(name: string, input: Buffer, dlp?: unknown) {
  const cs = chunks(input);
  // Warm up both paths.
  for (let k = 0; k < 2; k++) {
    const s = new Scrubber(dlp === undefined ? {} : { dlp });
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
    const s = new Scrubber(dlp === undefined ? {} : { dlp });
    let n = 0;
    for (const c of cs) n += s.push(c).length;
    n += s.end().length;
    redactions = s.report().count;
    return n;
  });
  const mb = input.length / (1024 * 1024);
  const fmt = (x: number) => x.toFixed(0).padStart(8);
  console.log(
    `${name.padEnd(44)} scrub ${fmt(mb / scrub.seconds)} MB/s   copy ${fmt(mb / copy.seconds)} MB/s   ratio ${(copy.seconds / scrub.seconds * 100).toFixed(2).padStart(6)}%   redactions ${redactions}`,
  );
}

const size = MB * 1024 * 1024;
const secrets = [FAKE.awsId, FAKE.ghp, FAKE.jwt, `postgres://u:pw@h/db`, `Bearer ${FAKE.lh}`, FAKE.skLive];
const nearMisses = ["AKIA is a prefix", "eyJ alone", "Bearer x", "postgres://h:5432/db", "lh_x", "-----BEGIN CERTIFICATE-----"];
const random = Buffer.alloc(size);
for (let i = 0; i < size; i += 4) random.writeUInt32LE((Math.imul(i, 2654435761) ^ (i >>> 7)) >>> 0, i);

console.log(`scrubber throughput, ${MB} MiB input, ${CHUNK / 1024} KiB chunks, node ${process.version}`);
run("log text, a secret every 64 KiB", makeLog(size, 64 * 1024, secrets));
run("log text, near-miss prefixes every 512 B", makeLog(size, 512, nearMisses));
run("random binary", random);
run("log text + 2 DLP patterns", makeLog(size, 64 * 1024, secrets), [
  { name: "ssn", pattern: "\\b\\d{3}-\\d{2}-\\d{4}\\b" },
  { name: "customer_id", pattern: "CUST-[0-9]{6}", flags: "i" },
]);
