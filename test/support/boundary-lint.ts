import { ESLint } from "eslint";

/** The rule both boundary tests hold (eslint.config.mjs, tools/lint/import-boundaries.mjs). */
export const BOUNDARY_RULE = "leasehold/import-boundaries";

/**
 * The boundary rule's errors for each fixture, linted as if it were the file
 * at `filePath` (ESLint's lintText: nothing is written into the checkout, so
 * a lint or typecheck running beside the tests never meets a fixture) with
 * the project's own config — its `files`, options and ignores — but only
 * that rule, and without type information: the rule reads import paths, and
 * the type-aware program the other rules need cost about 10 CPU-s per run.
 * A fixture that does not parse, or that the config ignores, throws.
 */
export async function boundaryErrors(fixtures: readonly { filePath: string; code: string }[], root: string): Promise<Map<string, string[]>> {
  const eslint = new ESLint({
    cwd: root,
    ruleFilter: ({ ruleId }) => ruleId === BOUNDARY_RULE,
    overrideConfig: [{ languageOptions: { parserOptions: { projectService: false, project: null } } }],
  });
  const errors = new Map<string, string[]>();
  for (const { filePath, code } of fixtures) {
    const [result] = await eslint.lintText(code, { filePath, warnIgnored: true });
    if (result === undefined) throw new Error(`ESLint returned no result for ${filePath}`);
    const fatal = result.messages.filter((m) => m.fatal === true);
    if (fatal.length > 0) throw new Error(`${filePath} did not lint: ${fatal.map((m) => m.message).join("; ")}`);
    const ignored = result.messages.filter((m) => m.ruleId === null && /ignore/i.test(m.message));
    if (ignored.length > 0) throw new Error(`${filePath} is ignored by the lint config: ${ignored[0]!.message}`);
    errors.set(filePath, result.messages.filter((m) => m.ruleId === BOUNDARY_RULE && m.severity === 2).map((m) => m.message));
  }
  return errors;
}
