// node:fs plus the `globSync` Node 22 added, enough for the conformance
// package's one use: globSync("**/checks.json", { cwd }). Patterns other
// than "**/<name>" and "<name>" are refused rather than guessed.
import fs from "node:fs";
import path from "node:path";

export * from "node:fs";
export default fs;

export function globSync(pattern, options = {}) {
  const cwd = options.cwd ?? process.cwd();
  const recursive = pattern.startsWith("**/");
  const name = recursive ? pattern.slice(3) : pattern;
  if (name.includes("/") || name.includes("*")) throw new Error(`node20-fs shim: unsupported glob ${pattern}`);
  if (!recursive) return fs.existsSync(path.join(cwd, name)) ? [name] : [];
  const found = [];
  const walk = (rel) => {
    for (const entry of fs.readdirSync(path.join(cwd, rel), { withFileTypes: true })) {
      const child = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else if (entry.name === name) found.push(child);
    }
  };
  walk("");
  return found;
}
