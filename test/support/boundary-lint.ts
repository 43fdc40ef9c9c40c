import { ESLint } from "eslint";

/** The rule both boundary tests hold (eslint.config.mjs, tools/lint/import-boundaries.mjs). */
export const BOUNDARY_RULE = "leasehold/import-boundaries";

/**
 * The boundary rule's errors for each file, linted in one ESLint run with the
 * project's own config (its `files`, options and ignores) but only that rule,
 * and without type information: the rule reads import paths, and the
 * type-aware program the other rules need cost about 10 CPU-s per run.
 * A fixture that does not parse throws, naming it.
 */
export async function boundaryErrors(root: string, files: readonly string[]): Promise<Map<string, string[]>> {
  const eslint = new ESLint({
    cwd: root,
    ruleFilter: ({ ruleId }) => ruleId === BOUNDARY_RULE,
    overrideConfig: [{ languageOptions: { parserOptions: { projectService: false, project: null } } }],
  });
  const results = await eslint.lintFiles([...files]);
  const errors = new Map<string, string[]>();
  for (const file of files) {
    const result = results.find((r) => r.filePath === file);
    if (result === undefined) throw new Error(`ESLint returned no result for ${file}`);
    const fatal = result.messages.filter((m) => m.fatal === true);
    if (fatal.length > 0) throw new Error(`${file} did not parse: ${fatal.map((m) => m.message).join("; ")}`);
    errors.set(file, result.messages.filter((m) => m.ruleId === BOUNDARY_RULE && m.severity === 2).map((m) => m.message));
  }
  return errors;
}
