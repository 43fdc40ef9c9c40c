// Lint rules that catch what reviews miss: unawaited promises (a swallowed
// error), drizzle delete/update without `where`, and imports that cross the
// architecture (server/ must not import Next.js or React).
import js from "@eslint/js";
import drizzle from "eslint-plugin-drizzle";
import tseslint from "typescript-eslint";
import globals from "globals";

export default tseslint.config(
  {
    ignores: ["node_modules/**", ".next/**", "dist/**", ".cache/**", "native/build/**", "next-env.d.ts", "test-results/**", "playwright-report/**"],
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
            { group: ["next", "next/*", "react", "react-dom", "react/*"], message: "server/ has no Next.js or React imports (see DESIGN.md)." },
            { group: ["**/app/**", "**/native/**"], message: "server/ never imports app/ or the native addon." },
          ],
        },
      ],
    },
  },
  {
    files: ["app/**/*.ts", "app/**/*.tsx"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ group: ["**/native/**"], message: "The Next app must never import the native addon (it breaks the build)." }] }],
    },
  },
);
