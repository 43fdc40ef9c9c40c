import path from "node:path";
import { fileURLToPath } from "node:url";
import { Language, Parser, type Tree } from "web-tree-sitter";

/*
 * One tree-sitter runtime and one bash grammar per process. Both wasm files are
 * resolved through Node's resolver rather than a path relative to this file:
 * under tsx and vitest this file sits in the source tree, under a Next.js
 * server bundle it does not, but the two packages stay in node_modules because
 * they are listed as serverExternalPackages.
 */

/**
 * Node's own resolver, anchored at this module. Bundlers rewrite `require`
 * and `createRequire` (Turbopack refuses a computed `require.resolve` at run
 * time), so the real `node:module` is fetched with process.getBuiltinModule,
 * which no bundler touches. In a Next.js server chunk this file lives under
 * .next/ inside the checkout, so resolution still walks up to node_modules.
 */
function nodeResolve(specifier: string): string {
  const nodeModule = process.getBuiltinModule("node:module");
  let anchor: string;
  try {
    anchor = fileURLToPath(import.meta.url);
  } catch {
    anchor = path.join(process.cwd(), "index.js");
  }
  return nodeModule.createRequire(anchor).resolve(specifier);
}

const wasmFile = (pkg: string, file: string): string => nodeResolve(`${pkg}/${file}`);

let parser: Parser | null = null;
let loading: Promise<Parser> | null = null;

async function load(): Promise<Parser> {
  const runtimeWasm = wasmFile("web-tree-sitter", "web-tree-sitter.wasm");
  const bashWasm = wasmFile("tree-sitter-bash", "tree-sitter-bash.wasm");
  await Parser.init({ locateFile: () => runtimeWasm });
  const bash = await Language.load(bashWasm);
  const created = new Parser();
  created.setLanguage(bash);
  return created;
}

/** Loads the grammar once; concurrent callers share the same load. A failed load is retried by the next caller. */
export function initShellParser(): Promise<void> {
  if (parser) return Promise.resolve();
  loading ??= load().then(
    (p) => {
      parser = p;
      return p;
    },
    (err: unknown) => {
      loading = null;
      throw err;
    },
  );
  return loading.then(() => undefined);
}

export function isShellParserReady(): boolean {
  return parser !== null;
}

/**
 * Parses synchronously. The caller owns the tree and must `delete()` it: trees
 * live in wasm memory that the JS garbage collector does not see.
 */
export function parseShell(text: string): Tree {
  if (!parser) throw new Error("shell parser not initialised: await initShellParser() first");
  const tree = parser.parse(text);
  if (!tree) throw new Error("tree-sitter returned no tree");
  return tree;
}
