import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { boundaryErrors } from "../../test/support/boundary-lint";

/**
 * The import boundaries of server/trust/README.md are an ESLint rule
 * (eslint.config.mjs, tools/lint/import-boundaries.mjs). These cases lint
 * code as if it were a file of the checkout (nothing is written there) with
 * the project's own config,
 * so removing the rule, narrowing its `files`, or loosening its options
 * fails here rather than passing silently.
 */
const ROOT = path.resolve(import.meta.dirname, "..", "..");

/** Each case's file: the folder it pretends to live in, its body and suffix. */
const FIXTURES = {
  guestImportsDb: { dir: "agent-guest", body: 'import { openPostgres } from "../server/db";\nexport const open = openPostgres;\n' },
  guestImportsTrust: { dir: "agent-guest", body: 'import { LeaseholdError } from "../server/trust";\nexport const E = LeaseholdError;\n' },
  trustReachesOut: { dir: "server/trust", body: 'import { LeaseholdError } from "../errors";\nexport const E = LeaseholdError;\n' },
  trustImportsFs: { dir: "server/trust", body: 'import fs from "node:fs";\nexport const read = fs.readFileSync;\n' },
  guestTestImportsDb: { dir: "agent-guest", body: 'import { openPostgres } from "../server/db";\nexport const open = openPostgres;\n', suffix: ".test.ts" },
} as const satisfies Record<string, { dir: string; body: string; suffix?: string }>;
type Fixture = keyof typeof FIXTURES;

const placed = new Map<Fixture, string>();
let errors = new Map<string, string[]>();
const errorsOf = (name: Fixture): string[] => errors.get(placed.get(name)!) ?? [];

beforeAll(async () => {
  for (const [name, f] of Object.entries(FIXTURES) as [Fixture, (typeof FIXTURES)[Fixture]][]) {
    placed.set(name, path.join(ROOT, f.dir, `lint-boundary-fixture-${name}${"suffix" in f ? f.suffix : ".ts"}`));
  }
  errors = await boundaryErrors([...placed].map(([name, filePath]) => ({ filePath, code: FIXTURES[name].body })), ROOT);
}, 180_000);

describe("import boundaries (ESLint rule leasehold/import-boundaries)", () => {
  it("refuses a guest file importing hub code outside server/trust, and admits server/trust", () => {
    expect(errorsOf("guestImportsDb")).toEqual([expect.stringMatching(/may not import server\/db: the guest shares only the hub ⇄ guest contract in server\/trust/)]);
    expect(errorsOf("guestImportsTrust")).toEqual([]);
  });

  it("refuses server/trust importing the rest of server/ or a package beyond node:crypto, zod and @oslojs/crypto", () => {
    expect(errorsOf("trustReachesOut")).toEqual([expect.stringMatching(/may not import server\/errors: server\/trust is the contract hub and guest both load/)]);
    expect(errorsOf("trustImportsFs")).toEqual([expect.stringMatching(/may not import the package node:fs \(only node:crypto, zod, @oslojs\/crypto\/sha2\)/)]);
  });

  it("exempts test files, which may set up a hub end to end", () => {
    expect(errorsOf("guestTestImportsDb")).toEqual([]);
  });
});
