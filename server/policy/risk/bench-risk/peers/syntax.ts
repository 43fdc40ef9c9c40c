import type { Node, Tree } from "web-tree-sitter";
import { parseShell } from "../../parser";

/**
 * The little tree-sitter-bash plumbing the peer models share. Codex and
 * Gemini CLI both parse with tree-sitter-bash, so reading the same grammar
 * here keeps their models close to what they see; Claude Code's model is
 * written from its changelog and uses the same plumbing for convenience.
 * The caller must `await initShellParser()` first (main.ts does).
 */

export function withTree<T>(text: string, read: (root: Node, tree: Tree) => T): T {
  const tree = parseShell(text);
  try {
    return read(tree.rootNode, tree);
  } finally {
    tree.delete();
  }
}

export function descendants(root: Node): Node[] {
  const out: Node[] = [];
  const stack: Node[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    out.push(node);
    for (let i = node.childCount - 1; i >= 0; i--) {
      const child = node.child(i);
      if (child) stack.push(child);
    }
  }
  return out;
}

export function namedChildren(node: Node): Node[] {
  return node.namedChildren.filter((c): c is Node => c !== null);
}

/** Removes bash backslash escapes from an unquoted word (`\ ` → ` `, `\;` → `;`). */
export function unescapeWord(raw: string): string {
  return raw.replace(/\\(.)/gs, "$1");
}

/** Options for reading a word node as one argument. */
export interface WordReading {
  /** What `$VAR`/`${…}` become; `null` makes the whole word unreadable. */
  variable: string | null;
}

/**
 * One argument with quotes removed, or null when it holds something this
 * reading does not accept (a substitution always; a variable unless
 * `reading.variable` gives its value).
 */
export function readWord(node: Node, reading: WordReading): string | null {
  switch (node.type) {
    case "word":
    case "number":
      return unescapeWord(node.text);
    case "raw_string":
      return node.text.slice(1, -1);
    case "string": {
      let out = "";
      for (const part of namedChildren(node)) {
        if (part.type === "string_content") out += part.text.replace(/\\([$`"\\\n])/g, "$1");
        else if ((part.type === "simple_expansion" || part.type === "expansion") && reading.variable !== null) out += reading.variable;
        else return null;
      }
      return out;
    }
    case "simple_expansion":
    case "expansion":
      return reading.variable;
    case "concatenation": {
      let out = "";
      for (const part of namedChildren(node)) {
        const piece = readWord(part, reading);
        if (piece === null) return null;
        out += piece;
      }
      return out;
    }
    default:
      return null;
  }
}

/** The arguments of a `command` node (name first), or null when one is unreadable or the command has anything but words. */
export function commandWords(command: Node, reading: WordReading): string[] | null {
  const words: string[] = [];
  for (const child of namedChildren(command)) {
    if (child.type === "command_name") {
      const inner = child.namedChild(0);
      if (!inner) return null;
      const word = readWord(inner, reading);
      if (word === null) return null;
      words.push(word);
    } else {
      const word = readWord(child, reading);
      if (word === null) return null;
      words.push(word);
    }
  }
  return words;
}

export function basename(program: string): string {
  const slash = program.lastIndexOf("/");
  return slash < 0 ? program : program.slice(slash + 1);
}
