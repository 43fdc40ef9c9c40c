/**
 * `npm run bench:risk`: how often the gate holds a legitimate read
 * (false holds, legit-corpus.ts) and how often it lets through a text that
 * must not be read-only (wrong allows, corpus.ts entries whose expected
 * level is not read_only), next to models of three published auto-allow
 * rules (peers/). Figures are printed and written as JSON
 * (tools/lib/bench-report.ts), never judged.
 *
 *   npm run bench:risk
 *   npm run bench:risk -- --analyzer /path/to/other/checkout   also rate with that checkout's analyser
 *   LEASEHOLD_RISK_ANALYZER=/path npm run bench:risk             the same, from the environment
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { reportBench, type BenchFigure } from "../../../../tools/lib/bench-report";
import { CORPUS } from "../corpus";
import { DELIBERATELY_HELD, LEGIT_CLASSES, LEGIT_CORPUS, OPEN_FALSE_HOLDS, type LegitCase } from "../legit-corpus";
import { initShellParser } from "../parser";
import { loadAnalyzer } from "./analyzer";
import { claudeCodeAllows } from "./peers/claude-code";
import { codexAllows } from "./peers/codex";
import { geminiAllows } from "./peers/gemini";

const EXAMPLES = 10;
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");

interface Gate {
  /** Short name used in figure names. */
  id: string;
  label: string;
  allows: (text: string) => boolean;
  peer: boolean;
}

interface Outcome {
  gate: Gate;
  legitAllowed: Set<string>;
  mustAllowed: Set<string>;
  errors: number;
}

function parseArgs(argv: readonly string[]): { analyzer: string | undefined } {
  let analyzer = process.env.LEASEHOLD_RISK_ANALYZER || undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--analyzer") analyzer = argv[++i];
    else if (arg.startsWith("--analyzer=")) analyzer = arg.slice("--analyzer=".length);
    else {
      console.error(`bench:risk: unknown argument ${arg}\nusage: npm run bench:risk -- [--analyzer <checkout root>]`);
      process.exit(2);
    }
    if (analyzer === undefined || analyzer === "") {
      console.error("bench:risk: --analyzer needs the root of a Leasehold checkout");
      process.exit(2);
    }
  }
  return { analyzer };
}

function run(gate: Gate, legit: readonly LegitCase[], mustHold: readonly string[]): Outcome {
  let errors = 0;
  const allows = (text: string): boolean => {
    try {
      return gate.allows(text);
    } catch {
      // A text a gate cannot rate is not allowed by it; counted so it is seen.
      errors++;
      return false;
    }
  };
  return {
    gate,
    legitAllowed: new Set(legit.filter((c) => allows(c.text)).map((c) => c.text)),
    mustAllowed: new Set(mustHold.filter((t) => allows(t))),
    errors,
  };
}

const pct = (n: number, d: number): number => (d === 0 ? 0 : (100 * n) / d);
const fmtPct = (n: number, d: number): string => `${pct(n, d).toFixed(1)} %`;
const show = (texts: readonly string[], limit = EXAMPLES): string[] => texts.slice(0, limit).map((t) => `      ${JSON.stringify(t.length > 110 ? `${t.slice(0, 107)}…` : t)}`);

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  await initShellParser();

  const legit = LEGIT_CORPUS.filter((c) => DELIBERATELY_HELD[c.text] === undefined);
  const mustHold = [...new Set(CORPUS.filter((c) => c.level !== "read_only").map((c) => c.text))];

  const current = await loadAnalyzer(repoRoot, "Leasehold (this checkout)");
  const gates: Gate[] = [{ id: "leasehold", label: current.label, allows: (t) => current.rate(t) === "read_only", peer: false }];
  if (options.analyzer !== undefined) {
    const other = await loadAnalyzer(options.analyzer, `Leasehold at ${options.analyzer}`);
    gates.push({ id: "leasehold_other", label: other.label, allows: (t) => other.rate(t) === "read_only", peer: false });
  }
  gates.push(
    { id: "codex", label: "Codex is_known_safe_command", allows: codexAllows, peer: true },
    { id: "gemini", label: "Gemini CLI default shell policy", allows: geminiAllows, peer: true },
    { id: "claude_code", label: "Claude Code (documented rules only)", allows: claudeCodeAllows, peer: true },
  );
  const outcomes = gates.map((g) => run(g, legit, mustHold));
  const ours = outcomes[0]!;

  console.log(`legit corpus: ${legit.length} read-only commands (${LEGIT_CORPUS.length - legit.length} held on purpose, left out: ${Object.keys(DELIBERATELY_HELD).join(", ")})`);
  console.log(`must-hold corpus: ${mustHold.length} texts (corpus.ts entries whose expected level is not read_only)`);
  console.log("");
  console.log(`${"gate".padEnd(38)} ${"legit allowed".padStart(14)} ${"false holds".padStart(18)} ${"wrong allows".padStart(18)}`);
  for (const o of outcomes) {
    const held = legit.length - o.legitAllowed.size;
    console.log(
      `${o.gate.label.padEnd(38)} ${`${o.legitAllowed.size}/${legit.length}`.padStart(14)} ${`${held} (${fmtPct(held, legit.length)})`.padStart(18)} ${`${o.mustAllowed.size} (${fmtPct(o.mustAllowed.size, mustHold.length)})`.padStart(18)}${o.errors ? `  [${o.errors} texts could not be rated: counted as held]` : ""}`,
    );
  }
  console.log("  Claude Code's source is not published: its row models only what its public changelog documents, so it overstates its false holds and understates its wrong allows (peers/claude-code.ts).");

  const open = Object.keys(OPEN_FALSE_HOLDS);
  console.log(`\nLeasehold false holds by class (this checkout${options.analyzer ? "; other checkout in brackets" : ""}):`);
  const other = options.analyzer ? outcomes[1] : undefined;
  const classFigures: BenchFigure[] = [];
  for (const cls of LEGIT_CLASSES) {
    const members = legit.filter((c) => c.class === cls);
    if (members.length === 0) continue;
    const held = members.filter((c) => !ours.legitAllowed.has(c.text)).length;
    const otherHeld = other ? members.filter((c) => !other.legitAllowed.has(c.text)).length : undefined;
    console.log(`  ${cls.padEnd(18)} ${`${held}/${members.length}`.padStart(7)} ${fmtPct(held, members.length).padStart(8)}${otherHeld === undefined ? "" : `   [${otherHeld}/${members.length} ${fmtPct(otherHeld, members.length)}]`}`);
    classFigures.push({ name: `leasehold false-hold rate: ${cls}`, value: pct(held, members.length), unit: "%" });
  }
  console.log(`  of these, ${open.filter((t) => !ours.legitAllowed.has(t)).length}/${open.length} are listed as open false holds (OPEN_FALSE_HOLDS)`);
  const unexpected = legit.filter((c) => !ours.legitAllowed.has(c.text) && OPEN_FALSE_HOLDS[c.text] === undefined);
  if (unexpected.length > 0) {
    console.log(`  held and on no list (legit-corpus.test.ts fails on these):`);
    console.log(show(unexpected.map((c) => c.text)).join("\n"));
  }
  if (ours.mustAllowed.size > 0) {
    console.log(`\nLeasehold wrong allows (${ours.mustAllowed.size}):`);
    console.log(show([...ours.mustAllowed]).join("\n"));
  }

  for (const o of outcomes.filter((x) => x.gate.peer)) {
    console.log(`\n== ${o.gate.label}`);
    console.log(`  allows ${o.legitAllowed.size}/${legit.length} legit commands (false-hold rate ${fmtPct(legit.length - o.legitAllowed.size, legit.length)})`);
    console.log(`  allows ${o.mustAllowed.size}/${mustHold.length} must-hold texts (wrong allows)${o.mustAllowed.size ? ", first ones:" : ""}`);
    if (o.mustAllowed.size) console.log(show([...o.mustAllowed], 5).join("\n"));
    const theyAllowLegit = legit.filter((c) => o.legitAllowed.has(c.text) && !ours.legitAllowed.has(c.text)).map((c) => c.text);
    const theyAllowMust = mustHold.filter((t) => o.mustAllowed.has(t) && !ours.mustAllowed.has(t));
    const weAllowLegit = legit.filter((c) => ours.legitAllowed.has(c.text) && !o.legitAllowed.has(c.text)).map((c) => c.text);
    const weAllowMust = mustHold.filter((t) => ours.mustAllowed.has(t) && !o.mustAllowed.has(t));
    console.log(`  they allow, we hold: ${theyAllowLegit.length + theyAllowMust.length} (${theyAllowLegit.length} legit — our false holds they avoid; ${theyAllowMust.length} must-hold — their wrong allows we catch)`);
    console.log(show([...theyAllowMust.map((t) => `[must-hold] ${t}`), ...theyAllowLegit.map((t) => `[legit] ${t}`)]).join("\n"));
    console.log(`  we allow, they hold: ${weAllowLegit.length + weAllowMust.length} (${weAllowLegit.length} legit — their false holds; ${weAllowMust.length} must-hold — our wrong allows they catch)`);
    console.log(show([...weAllowMust.map((t) => `[must-hold] ${t}`), ...weAllowLegit.map((t) => `[legit] ${t}`)]).join("\n"));
  }

  const figures: BenchFigure[] = [];
  for (const o of outcomes) {
    const held = legit.length - o.legitAllowed.size;
    figures.push(
      { name: `${o.gate.id} false-hold rate`, value: pct(held, legit.length), unit: "%", goal: o.gate.peer ? undefined : "fewer false holds without loosening (issue: everyday agent commands are not held)" },
      { name: `${o.gate.id} false holds`, value: held, unit: "commands" },
      { name: `${o.gate.id} wrong allows`, value: o.mustAllowed.size, unit: "texts", goal: o.gate.peer ? undefined : "zero: read-only is never given to a command that writes or runs code" },
    );
  }
  reportBench(
    "risk",
    {
      legit_corpus: legit.length,
      deliberately_held: Object.keys(DELIBERATELY_HELD).length,
      must_hold_corpus: mustHold.length,
      open_false_holds: open.length,
      analyzers: outcomes.filter((o) => !o.gate.peer).map((o) => ({ id: o.gate.id, label: o.gate.label })),
      peers: {
        codex: "openai/codex codex-rs/shell-command is_safe_command.rs @55dfa3cf, bash.rs @4935b354",
        gemini: "google-gemini/gemini-cli @5411f113 (policy-engine.ts, commandSafety.ts, write.toml)",
        claude_code: "documented rules only: anthropics/claude-code CHANGELOG.md @5cfc0a19 (source not published)",
      },
    },
    [...figures.map((f) => (f.goal === undefined ? { name: f.name, value: f.value, unit: f.unit } : f)), ...classFigures],
  );
}

await main();
