// Lint rules that catch what reviews miss: unawaited promises (a swallowed
// error), drizzle delete/update without `where`, and imports that cross the
// architecture (server/ must not import Next.js or React; the guest loads
// nothing of the hub but server/trust, the hub nothing of the guest, and
// server/trust nothing but itself).
import js from "@eslint/js";
import drizzle from "eslint-plugin-drizzle";
import tseslint from "typescript-eslint";
import globals from "globals";
import boundaries from "./tools/lint/import-boundaries.mjs";

// Tests and benchmarks may import hub code to set up a hub end to end
// (test/guest starts one for the guest to talk to): they are not part of
// either executable, so the boundary rules below do not apply to them.
const TESTS_AND_BENCHMARKS = ["**/*.test.ts", "**/test/**", "**/testdata/**", "**/*.bench.ts", "**/bench/**"];

/** One import-boundary block: production files only (tests and benchmarks are exempt). */
function boundary(files, options) {
  return { files, ignores: TESTS_AND_BENCHMARKS, plugins: { leasehold: boundaries }, rules: { "leasehold/import-boundaries": ["error", options] } };
}

// Files written only to be refused by the boundary rules (test/lint/boundaries.test.ts lints them on purpose).
const BOUNDARY_FIXTURES = "test/lint/fixtures/**";

export default tseslint.config(
  {
    ignores: [BOUNDARY_FIXTURES, "node_modules/**", ".next/**", "dist/**", ".cache/**", "native/build/**", "next-env.d.ts", "test-results/**", "playwright-report/**"],
  },
  js.configs.recommended,
  {
    files: ["**/*.mjs", "**/*.js"],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ["**/*.ts", "**/*.tsx"],
    extends: [tseslint.configs.recommended],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.node },
    },
    plugins: { drizzle },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { attributes: false } }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "drizzle/enforce-delete-with-where": ["error", { drizzleObjectName: ["db", "tx"] }],
      "drizzle/enforce-update-with-where": ["error", { drizzleObjectName: ["db", "tx"] }],
      "no-restricted-syntax": ["error", { selector: "ExportAllDeclaration", message: "List public exports by name (no export *)." }],
    },
  },
  {
    files: ["server/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["next", "next/*", "react", "react-dom", "react/*"], message: "server/ has no Next.js or React imports (see docs/design.md#shape)." },
            { group: ["**/app/**", "**/native/**"], message: "server/ never imports app/ or the native addon." },
          ],
        },
      ],
    },
  },
  // The guest agent (and the native addon and shared helpers it loads) runs
  // as root on every host: of the hub it may load only the contract.
  boundary(["agent-guest/**/*.ts", "native/**/*.ts", "bin/leasehold-guest-main.ts"], {
    forbidden: ["server", "app"],
    allowed: ["server/trust"],
    reason: "the guest shares only the hub ⇄ guest contract in server/trust (server/trust/README.md); move what it needs there if it is contract, else into agent-guest/ or common/",
  }),
  // The hub (server/, app/ and its executable's entry points) runs none of
  // the guest's code: what both sides run is the contract in server/trust.
  boundary(["server/**/*.ts", "app/**/*.ts", "app/**/*.tsx", "bin/leasehold-main.ts", "bin/next-web.ts", "bin/leasehold.mjs"], {
    forbidden: ["agent-guest"],
    reason: "the hub imports nothing of the guest; what both executables run is the contract in server/trust (server/trust/README.md) — move it there if it is contract",
  }),
  boundary(["common/**/*.ts"], {
    forbidden: ["server", "app", "agent-guest"],
    allowed: ["server/trust"],
    reason: "common/ is loaded by both executables and belongs to neither (common/README.md)",
  }),
  // The contract and its two wider corners: each may import only itself and
  // the packages listed (the rule's `packages` is an allow-list).
  boundary(["server/trust/**/*.ts"], {
    forbidden: [""],
    allowed: ["server/trust"],
    packages: ["node:crypto", "zod", "@oslojs/crypto/sha2"],
    reason: "server/trust is the contract hub and guest both load; it imports only itself, node:crypto, zod and @oslojs/crypto (SHA-256 where a browser runs the verifier) — no database, Next.js, files or network (server/trust/README.md)",
  }),
  // The scrubber streams (node:stream is a transform over bytes, no I/O of its own).
  boundary(["server/trust/scrub/**/*.ts"], {
    forbidden: [""],
    allowed: ["server/trust"],
    packages: ["node:crypto", "zod", "node:stream"],
    reason: "server/trust/scrub is contract both executables run; beyond node:crypto and zod it may stream (node:stream), nothing else — no database, files or network (server/trust/README.md)",
  }),
  // The worker-bundle reader reads the directory it is given (node:fs), and nothing more.
  boundary(["server/trust/bundle.ts"], {
    forbidden: [""],
    allowed: ["server/trust"],
    packages: ["node:crypto", "zod", "node:fs"],
    reason: "server/trust/bundle.ts is the worker-bundle reader both executables run; beyond node:crypto and zod it may read files (node:fs), nothing else (server/trust/README.md)",
  }),
  {
    // A function longer than a screen and a half is hard to review as one
    // unit. One that must stay long says why, on the line above it:
    // `// eslint-disable-next-line max-lines-per-function -- <why>`.
    files: ["server/**/*.ts", "agent-guest/**/*.ts", "common/**/*.ts", "native/**/*.ts", "app/**/*.ts", "app/**/*.tsx", "bin/**/*.ts"],
    ignores: [...TESTS_AND_BENCHMARKS, "**/bench-risk/**"],
    rules: { "max-lines-per-function": ["error", { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }] },
  },
  {
    files: ["app/**/*.ts", "app/**/*.tsx"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ group: ["**/native/**"], message: "The Next app must never import the native addon (it breaks the build)." }] }],
    },
  },
);
