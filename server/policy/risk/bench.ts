/**
 * Times parse+assess per corpus entry against a baseline measured in the same
 * run (tree-sitter parse alone), and prints the corpus's level distribution.
 * Run: npx tsx server/policy/risk/bench.ts [rounds]
 */
import { assessShellRiskSync, initShellRisk } from "./assess";
import { CORPUS } from "./corpus";
import { RISK_LEVELS, type RiskLevel } from "./levels";
import { parseShell } from "./parser";

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function fmt(ms: number): string {
  return `${(ms * 1000).toFixed(1)} µs`;
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 20);
  const initStart = performance.now();
  await initShellRisk();
  const initMs = performance.now() - initStart;

  // Warm the JIT so the first rounds do not dominate the percentiles.
  for (const c of CORPUS) assessShellRiskSync(c.text);

  const assess: number[] = [];
  const parseOnly: number[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const c of CORPUS) {
      let t = performance.now();
      parseShell(c.text).delete();
      parseOnly.push(performance.now() - t);
      t = performance.now();
      assessShellRiskSync(c.text);
      assess.push(performance.now() - t);
    }
  }
  assess.sort((a, b) => a - b);
  parseOnly.sort((a, b) => a - b);

  const distribution = Object.fromEntries(RISK_LEVELS.map((l) => [l, 0])) as Record<RiskLevel, number>;
  for (const c of CORPUS) distribution[c.level]++;

  console.log(`corpus entries: ${CORPUS.length}`);
  console.log(`expected level distribution: ${RISK_LEVELS.map((l) => `${l}=${distribution[l]}`).join(" ")}`);
  console.log(`grammar load (once per process): ${initMs.toFixed(1)} ms`);
  console.log(`samples: ${assess.length} (${rounds} rounds over the corpus)`);
  console.log(`baseline tree-sitter parse only: p50 ${fmt(percentile(parseOnly, 50))}  p99 ${fmt(percentile(parseOnly, 99))}`);
  console.log(`parse + assess:                  p50 ${fmt(percentile(assess, 50))}  p99 ${fmt(percentile(assess, 99))}  max ${fmt(assess[assess.length - 1]!)}`);
}

await main();
