import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";

/**
 * Loads Leasehold's risk analyser from a checkout, so one bench run can rate
 * the corpora with this tree's analyser and with another commit's (the
 * "before" figure). Each checkout brings its own parser and catalogue;
 * its `node_modules` must be present (a worktree can hard-link the main
 * one). Older analysers export the same two functions; a checkout that
 * exports neither form is refused with the path it read.
 */

export type Rate = (text: string) => string;

export interface Analyzer {
  label: string;
  root: string;
  rate: Rate;
}

const SyncModule = z.object({
  initShellRisk: z.function(),
  assessShellRiskSync: z.function(),
});

const Verdict = z.object({ level: z.string() });

export async function loadAnalyzer(root: string, label: string): Promise<Analyzer> {
  const resolved = path.resolve(root);
  const file = path.join(resolved, "server", "policy", "risk", "assess.ts");
  if (!fs.existsSync(file)) throw new Error(`bench-risk: no analyser at ${file} (--analyzer takes the root of a Leasehold checkout)`);
  const imported: unknown = await import(pathToFileURL(file).href);
  const parsed = SyncModule.safeParse(imported);
  if (!parsed.success) throw new Error(`bench-risk: ${file} does not export initShellRisk and assessShellRiskSync`);
  const mod = imported as { initShellRisk: () => Promise<void>; assessShellRiskSync: (text: string) => unknown };
  await mod.initShellRisk();
  return {
    label,
    root: resolved,
    rate: (text) => Verdict.parse(mod.assessShellRiskSync(text)).level,
  };
}
