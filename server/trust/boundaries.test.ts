import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { ESLint } from "eslint";
import { afterAll, describe, expect, it } from "vitest";

/**
 * The import boundaries of server/trust/README.md are an ESLint rule
 * (eslint.config.mjs, tools/lint/import-boundaries.mjs). These cases lint
 * throw-away files written into the checkout with the project's own config,
 * so removing the rule, narrowing its `files`, or loosening its options
 * fails here rather than passing silently.
 */
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const RULE = "leasehold/import-boundaries";
const written: string[] = [];

function fixture(dir: string, body: string, suffix = ".ts"): string {
  const file = path.join(ROOT, dir, `lint-boundary-fixture-${randomBytes(6).toString("hex")}${suffix}`);
  fs.writeFileSync(file, body);
  written.push(file);
  return file;
}

afterAll(() => {
  for (const file of written) fs.rmSync(file, { force: true });
});

async function boundaryErrors(file: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: ROOT });
  const [result] = await eslint.lintFiles([file]);
  return (result?.messages ?? []).filter((m) => m.ruleId === RULE && m.severity === 2).map((m) => m.message);
}

describe("import boundaries (ESLint rule leasehold/import-boundaries)", { timeout: 180_000 }, () => {
  it("refuses a guest file importing hub code outside server/trust, and admits server/trust", async () => {
    const bad = fixture("agent-guest", 'import { openPostgres } from "../server/db";\nexport const open = openPostgres;\n');
    const errors = await boundaryErrors(bad);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/may not import server\/db: the guest shares only the hub ⇄ guest contract in server\/trust/);

    const good = fixture("agent-guest", 'import { LeaseholdError } from "../server/trust";\nexport const E = LeaseholdError;\n');
    expect(await boundaryErrors(good)).toEqual([]);
  });

  it("refuses server/trust importing the rest of server/ or a package beyond node:crypto, zod and @oslojs/crypto", async () => {
    const reachesOut = fixture("server/trust", 'import { LeaseholdError } from "../errors";\nexport const E = LeaseholdError;\n');
    expect(await boundaryErrors(reachesOut)).toEqual([expect.stringMatching(/may not import server\/errors: server\/trust is the contract hub and guest both load/)]);

    const fsImport = fixture("server/trust", 'import fs from "node:fs";\nexport const read = fs.readFileSync;\n');
    expect(await boundaryErrors(fsImport)).toEqual([expect.stringMatching(/may not import the package node:fs \(only node:crypto, zod, @oslojs\/crypto\/sha2\)/)]);
  });

  it("exempts test files, which may set up a hub end to end", async () => {
    const test = fixture("agent-guest", 'import { openPostgres } from "../server/db";\nexport const open = openPostgres;\n', ".test.ts");
    expect(await boundaryErrors(test)).toEqual([]);
  });
});
