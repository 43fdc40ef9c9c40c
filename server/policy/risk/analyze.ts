import type { Node, Tree } from "web-tree-sitter";
import { catalogueNames, isInterpreterName, lookupCommand, sensitiveVariable, type Effect } from "./catalogue";
import type { RiskLevel } from "./levels";
import { envFindings } from "./environment";
import { classifyPath, isSecretRead, normalisePath } from "./paths";
import { parseShell } from "./parser";
import { evaluatedArguments, subscriptInjection, type EvaluatedArgument } from "./programs";
import { FIELD_BREAK, resolveNode, splitFields, type VariableLookup } from "./words";

/**
 * The walk over one shell text. It visits every node of the tree (so nothing
 * hides in a corner the walker forgot), asks the catalogue what each simple
 * command does, and carries the context the catalogue cannot see: what feeds
 * a command's stdin, which functions and aliases the script defined, which
 * variables hold static text, and how deep nested shell strings go.
 *
 * Over-approximation is deliberate: both branches of an `if` count, a
 * function body counts where it is defined and again where it is called, and
 * a variable assigned anywhere before a use is assumed to hold that value.
 */

export interface Span {
  start: number;
  end: number;
}

export interface Finding {
  level: RiskLevel;
  rule: string;
  command?: string;
  message: string;
  span: Span;
}

export interface CommandLine {
  text: string;
  command: string;
  span: Span;
}

interface Scope {
  source: string;
  depth: number;
  /** Maps an offset range in `source` to the caller's original text. */
  map(start: number, end: number): Span;
  /** Positional parameters inside a function call; null when unknown. */
  positional: readonly (string | null)[] | null;
}

interface Verbatim {
  scope: Scope;
  offset: number;
}

interface Literal {
  text: string;
  verbatim: Verbatim | null;
  span: Span;
}

/** What flows out of a command: where its data came from. */
interface Flow {
  network: boolean;
  decoder: boolean;
  literal: Literal | null;
}

interface Word {
  value: string | null;
  raw: string;
  span: Span;
  quoted: boolean;
  usesVariable: boolean;
  usesIfs: boolean;
  glob: boolean;
  flow: Flow;
  verbatim: Verbatim | null;
}

interface Stdin {
  via: "pipe" | "heredoc" | "herestring" | "file" | "the action's stdin";
  flow: Flow;
  span: Span;
  path?: string | null;
}

interface Ctx {
  stdin: Stdin | null;
  inPipeline: boolean;
  background: boolean;
  devTcp: boolean;
}

interface FunctionDef {
  body: Node;
  scope: Scope;
  span: Span;
}

const MAX_DEPTH = 8;
const MAX_COMMANDS = 5000;
/** Directories tracked after `cd`; past this many, one only known at run time stands for the rest. */
const MAX_CWDS = 16;
/**
 * How deeply syntax may nest (subshells in subshells, `$( $( ... ) )`, words
 * inside substitutions) before the walk stops. The walk recurses per level,
 * so this bounds its stack; long flat chains (`a && b && ...`, which the
 * grammar nests to the left) are walked iteratively and do not count.
 */
export const MAX_NODE_DEPTH = 200;
/** Wall-clock budget for one assessment; beyond it the verdict is `high` (held for a person). */
export const MAX_ANALYSIS_MS = 3000;
/** Action stdin larger than this is not parsed as shell; a shell reading it is high. */
const MAX_STDIN_ANALYSED = 256 * 1024;
const EMPTY_FLOW: Flow = { network: false, decoder: false, literal: null };
const ROOT_CTX: Ctx = { stdin: null, inPipeline: false, background: false, devTcp: false };
/**
 * Builtins that evaluate a word as arithmetic, a variable name or code
 * (an array subscript `a[$(id)]` in it runs), store it where a later
 * arithmetic expansion evaluates it (`set --`), or run a builtin named by a
 * word (`builtin`, `command`, the `time` keyword): a command substitution's
 * output is not passed to them as data.
 */
const EVALUATING_BUILTINS = new Set(["let", "test", "[", "read", "unset", "shift", "return", "exit", "wait", "getopts", "mapfile", "readarray", "ulimit", "declare", "typeset", "export", "local", "readonly", "printf", "set", "time", "eval", "source", ".", "trap", "alias", "enable", "bind", "complete", "compgen", "hash", "builtin", "command", "exec", "coproc", "fc", "caller", "history", "select"]);
const SYSTEM_BIN_DIRS = new Set(["/bin", "/usr/bin", "/sbin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin", "/usr/libexec", "/usr/lib/command-not-found"]);

function mergeFlows(flows: readonly Flow[]): Flow {
  return {
    network: flows.some((f) => f.network),
    decoder: flows.some((f) => f.decoder),
    literal: flows.length === 1 ? flows[0]!.literal : null,
  };
}

function globToRegExp(glob: string): RegExp {
  let re = "^";
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === "*") re += ".*";
    else if (ch === "?") re += ".";
    else if (ch === "[") {
      const close = glob.indexOf("]", i + 2);
      if (close === -1) re += "\\[";
      else {
        let body = glob.slice(i + 1, close);
        if (body.startsWith("!")) body = "^" + body.slice(1);
        re += "[" + body.replace(/\\/g, "\\\\") + "]";
        i = close;
      }
    } else re += ch.replace(/[.+^${}()|\\/]/g, "\\$&");
  }
  return new RegExp(re + "$");
}

export class ShellAnalysis {
  readonly findings: Finding[] = [];
  readonly commandLines: CommandLine[] = [];
  private readonly trees: Tree[] = [];
  private budget = MAX_COMMANDS;
  private budgetReported = false;
  private readonly vars = new Map<string, string>([["HOME", "~"]]);
  private readonly functions = new Map<string, FunctionDef>();
  private readonly aliases = new Map<string, string>();
  private readonly callStack: string[] = [];
  private readonly downloaded = new Set<string>();
  /**
   * Directories a `cd`/`pushd` earlier in the text may have moved to (null:
   * one only known at run time), accumulated like variables: a `cd` that may
   * fail or sits in one branch still counts. A subshell's own `cd` is dropped
   * when it ends.
   */
  private cwds: (string | null)[] = [];
  private nodeDepth = 0;
  private visits = 0;
  private stopped = false;
  private tooDeepReported = false;
  private readonly deadline: number;

  constructor(
    private readonly original: string,
    budgetMs = MAX_ANALYSIS_MS,
    private readonly actionStdin?: string,
  ) {
    this.deadline = Date.now() + budgetMs;
  }

  /**
   * The action's stdin as the top-level commands see it. Its text is shown to
   * a shell that reads it as a literal (so it is parsed); beyond the size
   * limit it is only "some input", which a reading shell makes high.
   */
  private rootStdin(): Stdin | null {
    if (this.actionStdin === undefined) return null;
    const span = { start: 0, end: this.original.length };
    const literal = this.actionStdin.length <= MAX_STDIN_ANALYSED ? { text: this.actionStdin, verbatim: null, span } : null;
    return { via: "the action's stdin", flow: { network: false, decoder: false, literal }, span };
  }

  run(): void {
    const root: Scope = { source: this.original, depth: 0, map: (start, end) => ({ start, end }), positional: null };
    try {
      this.analyseText(this.original, root, { ...ROOT_CTX, stdin: this.rootStdin() });
    } catch (err) {
      // A stack overflow in a corner the depth bound did not foresee still
      // ends in a verdict (held for a person), never in an exception.
      if (!(err instanceof RangeError)) throw err;
      this.stop("analysis.budget", "the text nests too deeply to analyse (the analyser ran out of stack); it is not analysed further", { start: 0, end: this.original.length });
    } finally {
      for (const tree of this.trees) tree.delete();
      this.trees.length = 0;
    }
  }

  // -------------------------------------------------------------------------
  // Texts and scopes

  private analyseText(text: string, scope: Scope, ctx: Ctx): Flow {
    if (scope.depth > MAX_DEPTH) {
      this.add("high", "parse.too-deep", `shell code nested more than ${MAX_DEPTH} levels deep is not analysed further`, scope.map(0, text.length));
      return EMPTY_FLOW;
    }
    if (text.includes("\0")) this.add("high", "parse.error", "the text contains a NUL byte, which shells handle inconsistently", scope.map(text.indexOf("\0"), text.indexOf("\0") + 1));
    const tree = parseShell(text);
    this.trees.push(tree);
    const root = tree.rootNode;
    if (root.hasError) this.reportParseErrors(root, scope);
    return this.visit(root, scope, { ...ctx, inPipeline: false, background: false });
  }

  private nestedScope(parent: Scope, verbatim: Verbatim | null, fallback: Span, positional = parent.positional): Scope {
    const map = verbatim
      ? (s: number, e: number): Span => verbatim.scope.map(verbatim.offset + s, verbatim.offset + e)
      : (): Span => fallback;
    return { source: "", depth: parent.depth + 1, map, positional };
  }

  private analyseNested(text: string, parent: Scope, verbatim: Verbatim | null, fallback: Span, ctx: Ctx): Flow {
    const scope = this.nestedScope(parent, verbatim, fallback);
    scope.source = text;
    return this.analyseText(text, scope, ctx);
  }

  /** Iterative (an explicit stack): a tree thousands of levels deep must not overflow the walk that reports its errors. */
  private reportParseErrors(root: Node, scope: Scope): void {
    let reported = 0;
    const stack: Node[] = [root];
    while (stack.length && reported < 3) {
      const node = stack.pop()!;
      if (node.isError || node.isMissing) {
        reported++;
        const what = node.isMissing ? `missing ${JSON.stringify(node.type)}` : `cannot parse ${JSON.stringify(node.text.slice(0, 40))}`;
        this.add("high", "parse.error", `the shell text does not parse (${what}); unparsed text is not analysed precisely`, this.span(node, scope));
        continue;
      }
      if (!node.hasError) continue;
      const children = node.children;
      for (let i = children.length - 1; i >= 0; i--) if (children[i]) stack.push(children[i]!);
    }
    if (reported === 0) this.add("high", "parse.error", "the shell text does not parse; unparsed text is not analysed precisely", this.span(root, scope));
  }

  // -------------------------------------------------------------------------
  // Findings

  private add(level: RiskLevel, rule: string, message: string, span: Span, command?: string): void {
    const f: Finding = { level, rule, message, span };
    if (command !== undefined) f.command = command;
    this.findings.push(f);
  }

  private span(node: Node, scope: Scope): Span {
    return scope.map(node.startIndex, node.endIndex);
  }

  /** Ends the walk with a `high` reason; everything not yet visited stays unanalysed. */
  private stop(rule: string, message: string, span: Span): void {
    if (this.stopped) return;
    this.stopped = true;
    this.add("high", rule, message, span);
  }

  private spend(span: Span): boolean {
    if (this.budget-- > 0) return true;
    if (!this.budgetReported) {
      this.budgetReported = true;
      this.add("high", "analysis.budget", `more than ${MAX_COMMANDS} commands to analyse; the rest is not analysed`, span);
    }
    return false;
  }

  // -------------------------------------------------------------------------
  // The walk

  private visit(node: Node, scope: Scope, ctx: Ctx): Flow {
    if (this.stopped) return EMPTY_FLOW;
    if ((++this.visits & 255) === 0 && Date.now() > this.deadline) {
      this.stop("analysis.budget", `the analysis took longer than ${MAX_ANALYSIS_MS} ms; the rest is not analysed`, this.span(node, scope));
      return EMPTY_FLOW;
    }
    if (this.nodeDepth >= MAX_NODE_DEPTH) {
      // Only this subtree is skipped: what follows it is still analysed.
      if (!this.tooDeepReported) {
        this.tooDeepReported = true;
        this.add("high", "parse.too-deep", `the shell syntax nests more than ${MAX_NODE_DEPTH} levels deep; the deeper part is not analysed`, this.span(node, scope));
      }
      return EMPTY_FLOW;
    }
    this.nodeDepth++;
    try {
      return this.visitNode(node, scope, ctx);
    } finally {
      this.nodeDepth--;
    }
  }

  private visitNode(node: Node, scope: Scope, ctx: Ctx): Flow {
    switch (node.type) {
      case "list":
        return this.list(node, scope, ctx);
      case "command":
        return this.command(node, scope, ctx);
      case "pipeline":
        return this.pipeline(node.namedChildren.filter((c): c is Node => c !== null && c.type !== "comment"), scope, ctx, EMPTY_FLOW);
      case "redirected_statement":
        return this.redirectedStatement(node, scope, ctx);
      case "function_definition":
        this.functionDefinition(node, scope, ctx);
        return EMPTY_FLOW;
      case "variable_assignment":
        return this.assignment(node, scope, true);
      case "variable_assignments":
      case "declaration_command":
        return this.declaration(node, scope);
      case "unset_command":
        for (const c of node.namedChildren) if (c && (c.type === "variable_name" || c.type === "word")) this.vars.delete(c.text);
        return EMPTY_FLOW;
      case "subshell":
        return this.inSubshell(() => this.visitChildren(node, scope, ctx));
      case "command_substitution":
      case "process_substitution": {
        const isCommand = node.type === "command_substitution";
        const before = this.findings.length;
        const inner = this.inSubshell(() => this.visitChildren(node, scope, { ...ROOT_CTX }));
        const added = this.findings.slice(before);
        // `<(…)` hands the command a pipe's path to read; `>(…)` takes what the command writes, so it stays low.
        const readsFromIt = isCommand || node.text.startsWith("<(");
        const readOnly = readsFromIt && added.some((f) => f.rule === "command.read-only") && added.every((f) => f.level === "read_only") && this.plainArgument(node, scope);
        if (readOnly && isCommand) this.add("read_only", "substitution.command", "command substitution of read-only commands: its output is a word of the command, judged as one only known at run time", this.span(node, scope));
        else if (readOnly) this.add("read_only", "substitution.process", "process substitution of read-only commands: the command reads their output from a pipe", this.span(node, scope));
        else this.add("low", isCommand ? "substitution.command" : "substitution.process", isCommand ? "command substitution: its output becomes part of another command" : "process substitution runs a command whose output is read as a file", this.span(node, scope));
        return { network: inner.network, decoder: inner.decoder, literal: null };
      }
      case "file_redirect":
      case "heredoc_redirect":
      case "herestring_redirect": {
        // A redirect outside a command or redirected statement: still walk it.
        const r = this.redirects([node], scope);
        r.finish(EMPTY_FLOW, null);
        return EMPTY_FLOW;
      }
      case "expansion":
        return this.expansion(node, scope, ctx);
      case "comment":
        return EMPTY_FLOW;
      default:
        return this.visitChildren(node, scope, ctx);
    }
  }

  /**
   * `${…}`: the grammar leaves backquotes in an operator's word as plain text
   * (`${x:=`id`}`, `${x#`id`}`) — bash runs them; and `${x@P}` expands the
   * value as a prompt string, which runs the command substitutions in it.
   */
  private expansion(node: Node, scope: Scope, ctx: Ctx): Flow {
    const flows: Flow[] = [this.expansionBackquotes(node, scope)];
    const children = node.children;
    const prompt = children.some((c, i) => c?.type === "@" && !c.isNamed && children[i + 1]?.type === "P" && !children[i + 1]!.isNamed);
    if (prompt) flows.push(this.promptExpansion(node, scope));
    flows.push(this.visitChildren(node, scope, ctx));
    return mergeFlows(flows);
  }

  private expansionBackquotes(node: Node, scope: Scope): Flow {
    if (!node.text.includes("`")) return EMPTY_FLOW;
    // Inside double quotes single quotes are literal in an operator's word (`"${x:-'`id`'}"` runs id); outside they quote.
    let inDoubleQuotes = false;
    for (let p = node.parent; p !== null; p = p.parent) {
      if (p.type === "string") {
        inDoubleQuotes = true;
        break;
      }
      if (p.type === "command_substitution" || p.type === "process_substitution" || p.type === "program") break;
    }
    const walked = new Set(["command_substitution", "process_substitution", "expansion", "simple_expansion", "arithmetic_expansion", "string", "translated_string"]);
    if (!inDoubleQuotes) walked.add("raw_string").add("ansi_c_string");
    // Parts the walk analyses itself (or that quote their backquotes) are skipped, outermost first.
    const skip: Span[] = [];
    const stack: Node[] = node.namedChildren.filter((c): c is Node => c !== null);
    while (stack.length) {
      const n = stack.pop()!;
      if (walked.has(n.type)) skip.push({ start: n.startIndex - node.startIndex, end: n.endIndex - node.startIndex });
      else for (const c of n.namedChildren) if (c) stack.push(c);
    }
    return this.backquotes(node, scope, skip, "in a ${…} word");
  }

  /** `${x@P}`: the value of x is expanded like a prompt — `$( )`, backquotes and `${ }` in it run. */
  private promptExpansion(node: Node, scope: Scope): Flow {
    const span = this.span(node, scope);
    const named = node.namedChildren.filter((c): c is Node => c !== null);
    const indirect = node.children.some((c) => c?.type === "!" && !c.isNamed);
    const value = !indirect && named.length === 1 && named[0]!.type === "variable_name" ? this.lookup(scope).get(named[0]!.text) : undefined;
    if (typeof value !== "string") {
      this.add("high", "dynamic.shell-code", `${node.text} expands a value only known at run time as a prompt string; command substitutions in it run`, span);
      return EMPTY_FLOW;
    }
    this.add("medium", "dynamic.shell-code", `${node.text} expands the value of ${named[0]!.text} as a prompt string, which runs the command substitutions in it; it is parsed and analysed too`, span);
    if (!/[$`]/.test(value)) return EMPTY_FLOW;
    // A prompt expands like an unquoted heredoc body: `$( )`, backquotes and `${ }` run, quotes are literal.
    let end = "LEASEHOLD_PROMPT";
    while (value.includes(end)) end += "_";
    const flow = this.analyseNested(`: <<${end}\n${value}\n${end}\n`, scope, null, span, { ...ROOT_CTX });
    return { network: flow.network, decoder: flow.decoder, literal: null };
  }

  /**
   * Is this command substitution a word (or part of one) of a simple command
   * that only passes it on as data? Its output is then judged where it lands,
   * as a word only known at run time. Elsewhere the output is evaluated: an
   * assignment feeds a later `$((x))`, `[[ ]]`, `(( ))`, `$(( ))`, `${x:…}`
   * and array subscripts evaluate it as arithmetic (`a[$(id)]` in it runs),
   * and so do the builtins below, functions and aliases (which may pass it to
   * one) — there it stays a substitution held for a person.
   */
  private plainArgument(node: Node, scope: Scope): boolean {
    let child: Node = node;
    let parent = node.parent;
    while (parent && (parent.type === "string" || parent.type === "concatenation")) {
      child = parent;
      parent = parent.parent;
    }
    if (!parent || parent.type !== "command") return false;
    if (parent.childForFieldName("name")?.id === child.id) return false;
    const name = this.simpleName(parent, scope);
    if (name === null || EVALUATING_BUILTINS.has(name) || this.functions.has(name) || this.aliases.has(name)) return false;
    const nameText = parent.childForFieldName("name")?.text ?? "";
    return !nameText.includes("/") || SYSTEM_BIN_DIRS.has(normalisePath(nameText).replace(/\/[^/]*$/, "") || "/");
  }

  /**
   * `a && b || c ; d`: the grammar nests lists to the left, one level per
   * operator, so 8,000 `&&`s are 8,000 levels. They are flattened with an
   * explicit stack and walked in order at one depth.
   */
  private list(node: Node, scope: Scope, ctx: Ctx): Flow {
    const items: { node: Node; background: boolean }[] = [];
    const stack: { node: Node; background: boolean }[] = [{ node, background: false }];
    while (stack.length) {
      const item = stack.pop()!;
      if (item.node.type !== "list") {
        items.push(item);
        continue;
      }
      const children = item.node.children;
      const parts: { node: Node; background: boolean }[] = [];
      for (let i = 0; i < children.length; i++) {
        const child = children[i];
        if (!child || !child.isNamed) continue;
        parts.push({ node: child, background: item.background || children[i + 1]?.type === "&" });
      }
      for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i]!);
    }
    const flows: Flow[] = [];
    for (const item of items) {
      if (this.stopped) break;
      flows.push(this.visit(item.node, scope, item.background ? { ...ctx, background: true } : ctx));
    }
    return mergeFlows(flows);
  }

  private visitChildren(node: Node, scope: Scope, ctx: Ctx): Flow {
    const flows: Flow[] = [];
    const children = node.children;
    for (let i = 0; i < children.length; i++) {
      const child = children[i];
      if (!child || !child.isNamed) continue;
      const background = children[i + 1]?.type === "&";
      flows.push(this.visit(child, scope, background ? { ...ctx, background: true } : ctx));
    }
    return mergeFlows(flows);
  }

  private pipeline(stages: readonly Node[], scope: Scope, ctx: Ctx, upstream: Flow, firstStdin: Stdin | null = ctx.stdin): Flow {
    let acc: Flow = upstream;
    let previous: Flow | null = null;
    let stdin = firstStdin;
    for (const stage of stages) {
      if (previous !== null) stdin = { via: "pipe", flow: { network: acc.network, decoder: acc.decoder, literal: previous.literal }, span: this.span(stage, scope) };
      // Every stage of a pipeline runs in a subshell of its own.
      const out: Flow = stages.length > 1 ? this.inSubshell(() => this.visit(stage, scope, { ...ctx, stdin, inPipeline: true })) : this.visit(stage, scope, { ...ctx, stdin, inPipeline: true });
      acc = { network: acc.network || out.network, decoder: acc.decoder || out.decoder, literal: null };
      previous = out;
    }
    return { network: acc.network, decoder: acc.decoder, literal: previous?.literal ?? null };
  }

  private redirectedStatement(node: Node, scope: Scope, ctx: Ctx): Flow {
    const body = node.childForFieldName("body");
    const redirectNodes: Node[] = [];
    node.children.forEach((c, i) => {
      if (c && (node.fieldNameForChild(i) === "redirect" || c.type.endsWith("_redirect"))) redirectNodes.push(c);
    });
    const r = this.redirects(redirectNodes, scope);
    const inner: Ctx = { ...ctx, stdin: r.stdin ?? ctx.stdin, devTcp: ctx.devTcp || r.devTcp };
    let out = body ? this.visit(body, scope, inner) : EMPTY_FLOW;
    const name = body?.type === "command" ? this.simpleName(body, scope) : null;
    r.finish(out, name);
    if (body && r.pipeTail.length) out = this.pipeline(r.pipeTail, scope, ctx, out, { via: "pipe", flow: out, span: this.span(r.pipeTail[0]!, scope) });
    for (const tail of r.listTail) out = mergeFlows([out, this.visit(tail, scope, ctx)]);
    return out;
  }

  /** Name of a simple command if static, for checks that depend on the program (reverse shells). */
  private simpleName(command: Node, scope: Scope): string | null {
    const nameNode = command.childForFieldName("name")?.firstNamedChild ?? null;
    if (!nameNode) return null;
    const r = resolveNode(nameNode, this.lookup(scope));
    if (r.value === null) return null;
    const v = r.value.split(FIELD_BREAK)[0] ?? "";
    return v.slice(v.lastIndexOf("/") + 1);
  }

  /**
   * Reads a command's redirections. Inputs are decided before the command is
   * walked (they shape its stdin); writes are judged after it, when we know
   * whether network data is what gets written.
   */
  private redirects(nodes: readonly Node[], scope: Scope): {
    stdin: Stdin | null;
    devTcp: boolean;
    pipeTail: Node[];
    listTail: Node[];
    finish: (out: Flow, command: string | null) => void;
  } {
    let stdin: Stdin | null = null;
    let devTcp = false;
    const pipeTail: Node[] = [];
    const listTail: Node[] = [];
    const writes: { word: Word; node: Node }[] = [];
    const reads: Word[] = [];
    const lookup = this.lookup(scope);
    for (const node of nodes) {
      if (node.type === "file_redirect") {
        const op = node.children.find((c) => c && !c.isNamed)?.type ?? "";
        const dests = node.childrenForFieldName("destination").filter((c): c is Node => c !== null);
        for (const dest of dests) {
          const word = this.word(dest, scope, lookup);
          const value = word.value;
          if (value !== null && /^\/dev\/(tcp|udp)\//.test(value)) {
            devTcp = true;
            this.add("high", "network.dev-tcp", `opens a network connection through ${value}`, word.span);
            continue;
          }
          if (op === "<" || op === "<&" || op === "<&-" || op === ">&-") {
            if (op === "<") {
              stdin = { via: "file", flow: { ...word.flow, literal: null }, span: word.span, path: value };
              reads.push(word);
            }
            continue;
          }
          if ((op === ">&" || op === "<&") && (dest.type === "number" || value === "-" || (value !== null && /^\d+-?$/.test(value)))) continue;
          writes.push({ word, node });
        }
      } else if (node.type === "heredoc_redirect") {
        stdin = this.heredoc(node, scope, pipeTail, listTail, writes, lookup);
      } else if (node.type === "herestring_redirect") {
        const value = node.namedChildren.find((c) => c !== null && c.type !== "file_descriptor") ?? null;
        if (value) {
          const word = this.word(value, scope, lookup);
          const literal = word.value === null ? null : { text: word.value.split(FIELD_BREAK).join(" ") + "\n", verbatim: word.verbatim, span: word.span };
          stdin = { via: "herestring", flow: { network: word.flow.network, decoder: word.flow.decoder, literal }, span: word.span };
        }
      }
    }
    const finish = (out: Flow, command: string | null): void => {
      if (devTcp && command !== null && isInterpreterName(command)) {
        this.add("critical", "network.reverse-shell", `${command} with its input or output on a network socket is a remote shell`, writes[0]?.word.span ?? this.span(nodes[0]!, scope), command);
      }
      for (const { word } of writes) this.judgeWrite(word, out, command);
      // Judged after the command: the grammar hangs `a && b < f` on the whole list, and `a` may be a `cd`.
      for (const word of reads) if (isSecretRead(word.value, { cwds: this.cwds })) this.add("medium", "path.read-secret", `reads a credential file (${word.value})`, word.span);
    };
    return { stdin, devTcp, pipeTail, listTail, finish };
  }

  private heredoc(node: Node, scope: Scope, pipeTail: Node[], listTail: Node[], writes: { word: Word; node: Node }[], lookup: VariableLookup): Stdin {
    let delimiterQuoted = false;
    let stripTabs = false;
    let body: Node | null = null;
    const bodyFlows: Flow[] = [];
    node.children.forEach((c, i) => {
      if (!c) return;
      const field = node.fieldNameForChild(i);
      if (c.type === "<<-") stripTabs = true;
      else if (c.type === "heredoc_start") delimiterQuoted = /['"\\]/.test(c.text);
      else if (c.type === "heredoc_body") body = c;
      else if (c.type === "pipeline") pipeTail.push(...c.namedChildren.filter((s): s is Node => s !== null && s.type !== "comment"));
      else if (c.type === "file_redirect") {
        const dest = c.childForFieldName("destination");
        const op = c.children.find((x) => x && !x.isNamed)?.type ?? "";
        if (dest && op !== "<" && !(op.endsWith("&") && dest.type === "number")) writes.push({ word: this.word(dest, scope, lookup), node: c });
      } else if (field === "right" || (c.isNamed && !["heredoc_end", "heredoc_start", "heredoc_body"].includes(c.type))) listTail.push(c);
    });
    const bodyNode = body as Node | null;
    let literal: Literal | null = null;
    if (bodyNode) {
      let expanding = bodyNode.namedChildren.some((c) => c !== null && c.type !== "heredoc_content");
      // The grammar leaves backquotes in a heredoc body as plain content; bash runs them.
      if (!delimiterQuoted && bodyNode.text.includes("`")) {
        expanding = true;
        bodyFlows.push(this.backquotes(bodyNode, scope, [], "in an unquoted heredoc body"));
      }
      // Unquoted heredocs expand `$(...)` even when fed to `cat`: walk them.
      if (expanding && !delimiterQuoted) bodyFlows.push(this.visitChildren(bodyNode, scope, { ...ROOT_CTX }));
      if (delimiterQuoted || !expanding) {
        let text = bodyNode.text;
        let verbatim: Verbatim | null = { scope, offset: bodyNode.startIndex };
        if (stripTabs && /(^|\n)\t/.test(text)) {
          text = text.replace(/(^|\n)\t+/g, "$1");
          verbatim = null;
        }
        if (!delimiterQuoted && /\\/.test(text)) verbatim = null;
        literal = { text, verbatim, span: this.span(bodyNode, scope) };
      }
    }
    const flow = mergeFlows(bodyFlows);
    return { via: "heredoc", flow: { network: flow.network, decoder: flow.decoder, literal }, span: bodyNode ? this.span(bodyNode, scope) : this.span(node, scope) };
  }

  /**
   * Backquoted command substitutions in text the grammar left plain (an
   * unquoted heredoc body, the word of a `${…}` operator), found the way bash
   * finds them: `\`` is a literal backquote outside and a nested one inside;
   * `\\` and `\$` lose their backslash inside. `skip`: ranges (relative to
   * the node) the walk analyses itself, passed over outside backquotes.
   */
  private backquotes(textNode: Node, scope: Scope, skip: readonly Span[], where: string): Flow {
    const text = textNode.text;
    const flows: Flow[] = [];
    let i = 0;
    while (i < text.length) {
      const skipped = skip.find((r) => r.start === i);
      if (skipped) {
        i = Math.max(i + 1, skipped.end);
        continue;
      }
      const ch = text[i];
      if (ch === "\\") {
        i += 2;
        continue;
      }
      if (ch !== "`") {
        i++;
        continue;
      }
      let j = i + 1;
      let inner = "";
      let verbatim = true;
      while (j < text.length && text[j] !== "`") {
        if (text[j] === "\\" && j + 1 < text.length && "`$\\".includes(text[j + 1]!)) {
          inner += text[j + 1];
          verbatim = false;
          j += 2;
          continue;
        }
        inner += text[j];
        j++;
      }
      const span = scope.map(textNode.startIndex + i, textNode.startIndex + Math.min(j + 1, text.length));
      if (j >= text.length) {
        this.add("high", "parse.error", `a backquote ${where} has no closing backquote`, span);
        break;
      }
      this.add("low", "substitution.command", `command substitution (backquotes) ${where}: it runs when the text is expanded`, span);
      if (inner.trim()) {
        const flow = this.analyseNested(inner, scope, verbatim ? { scope, offset: textNode.startIndex + i + 1 } : null, span, { ...ROOT_CTX });
        flows.push({ network: flow.network, decoder: flow.decoder, literal: null });
      }
      i = j + 1;
    }
    return mergeFlows(flows);
  }

  private judgeWrite(word: Word, out: Flow, command: string | null): void {
    const target = word.value;
    const cls = classifyPath(target);
    const label = target ?? word.raw;
    const cmd = command ?? undefined;
    switch (cls) {
      case "discard":
        return;
      case "device":
        this.add("critical", "redirect.write-device", `redirects output onto the raw device ${label}`, word.span, cmd);
        return;
      case "root":
      case "system":
      case "user-secret":
        this.add("high", "redirect.write-sensitive", `redirects output into a system, credential or start-up path (${label})`, word.span, cmd);
        break;
      case "outside":
        this.add("medium", "redirect.write-outside", `redirects output outside the working directory (${label})`, word.span, cmd);
        break;
      case "dynamic":
        this.add("medium", "redirect.write-dynamic", `redirects output to a path only known at run time (${label})`, word.span, cmd);
        break;
      default:
        this.add("low", "redirect.write", `writes a file by redirection (${label})`, word.span, cmd);
    }
    if (out.network && target !== null) this.downloaded.add(normalisePath(target));
  }

  // -------------------------------------------------------------------------
  // The working directory

  private inSubshell<T>(walk: () => T): T {
    const saved = [...this.cwds];
    try {
      return walk();
    } finally {
      this.cwds = saved;
    }
  }

  /**
   * `cd DIR` / `pushd DIR`: later relative paths may be read from DIR. A
   * relative DIR is joined to every directory already possible; `cd -`,
   * `pushd` rotations, a run-time value, or any relative DIR in a text that
   * mentions CDPATH (which redirects it) is a directory only known at run time.
   */
  private changeDirectory(name: string, args: readonly (string | null)[]): void {
    let i = 0;
    while (i < args.length && args[i] !== null && /^-[LPe@]+$/.test(args[i]!)) i++;
    if (args[i] === "--") i++;
    const target = i < args.length ? (args[i] ?? null) : name === "cd" ? "~" : null;
    const next: (string | null)[] = [];
    if (target === null || target === "-" || /^[+-]\d+$/.test(target)) next.push(null);
    else if (target.startsWith("/") || target.startsWith("~")) next.push(target);
    else if (this.original.includes("CDPATH")) next.push(null);
    else {
      next.push(target);
      for (const cwd of this.cwds) next.push(cwd === null ? null : cwd + "/" + target);
    }
    for (const dir of next) {
      if (this.cwds.includes(dir)) continue;
      if (this.cwds.length >= MAX_CWDS) {
        if (!this.cwds.includes(null)) this.cwds.push(null);
        return;
      }
      this.cwds.push(dir);
    }
  }

  // -------------------------------------------------------------------------
  // Variables, functions, aliases

  private lookup(scope: Scope): VariableLookup {
    return {
      get: (name: string) => {
        if (/^\d+$/.test(name)) {
          if (!scope.positional) return undefined;
          const v = name === "0" ? null : (scope.positional[Number(name) - 1] ?? "");
          return v === null ? undefined : v;
        }
        if (name === "@" || name === "*") {
          if (!scope.positional || scope.positional.some((p) => p === null)) return undefined;
          return scope.positional as string[];
        }
        if (name === "#") return scope.positional ? String(scope.positional.length) : undefined;
        return this.vars.get(name);
      },
    };
  }

  /**
   * `exported`: the value reaches the environment of programs (a prefix
   * assignment `X=v cmd`, `export X=v`, `declare -x`). Variables that make
   * programs run code (TAR_OPTIONS, GIT_*, LESSOPEN…) are high even when not
   * exported: one inherited from the environment is exported already.
   */
  private assignment(node: Node, scope: Scope, record: boolean, exported = !record): Flow {
    const nameNode = node.childForFieldName("name");
    const valueNode = node.childForFieldName("value");
    const name = nameNode?.text ?? "";
    const flow = valueNode ? this.visit(valueNode, scope, { ...ROOT_CTX }) : EMPTY_FLOW;
    const sensitive = sensitiveVariable(name);
    if (sensitive) this.add(sensitive.level, name === "IFS" ? "evasion.ifs" : "env.sensitive-variable", sensitive.message, this.span(node, scope));
    else if (name) {
      const value = valueNode ? resolveNode(valueNode, this.lookup(scope), true).value : "";
      const env = envFindings({ [name]: value ?? "\u0000dynamic" })[0];
      if (env && (env.level === "high" || (exported && env.level !== "read_only"))) this.add(env.level, env.rule, env.message, this.span(node, scope), name);
    }
    if (record && name) {
      const resolved = valueNode ? resolveNode(valueNode, this.lookup(scope), true) : { value: "" };
      const isArray = valueNode?.type === "array";
      if (resolved.value !== null && !isArray && !node.text.includes("+=")) this.vars.set(name, resolved.value);
      else this.vars.delete(name);
    }
    return { network: flow.network, decoder: flow.decoder, literal: null };
  }

  private declaration(node: Node, scope: Scope): Flow {
    const flows: Flow[] = [];
    const keyword = node.children[0]?.type ?? "";
    const exported = keyword === "export" || node.namedChildren.some((c) => c !== null && c.type === "word" && /^-[a-zA-Z]*x/.test(c.text));
    for (const c of node.namedChildren) {
      if (!c) continue;
      if (c.type === "variable_assignment") flows.push(this.assignment(c, scope, true, exported));
      else {
        flows.push(this.visit(c, scope, { ...ROOT_CTX }));
        // `declare 'a[$(id)]=1'`: bash evaluates the subscript of a quoted assignment word too.
        const value = resolveNode(c, this.lookup(scope)).value;
        if (value !== null && subscriptInjection([value]).length) this.add("high", "dynamic.shell-code", "bash expands this array subscript, and the command substitution inside it runs", this.span(c, scope));
      }
    }
    return mergeFlows(flows);
  }

  private functionDefinition(node: Node, scope: Scope, ctx: Ctx): void {
    const nameNode = node.childForFieldName("name");
    const body = node.childForFieldName("body");
    if (!nameNode || !body) return;
    const name = resolveNode(nameNode, this.lookup(scope)).value ?? nameNode.text;
    const span = this.span(node, scope);
    this.functions.set(name, { body, scope, span });
    const base = name.slice(name.lastIndexOf("/") + 1);
    if (lookupCommand(base)) this.add("medium", "function.shadows-command", `defines a function named ${name}: later calls to ${name} run this body instead of the program`, this.span(nameNode, scope), name);
    // The body counts even if the call is hidden from us; arguments are unknown here.
    this.callStack.push(name);
    try {
      this.visit(body, { ...scope, positional: null }, { ...ctx, stdin: null, inPipeline: false, background: false });
    } finally {
      this.callStack.pop();
    }
  }

  private callFunction(name: string, def: FunctionDef, args: readonly Word[], span: Span, ctx: Ctx): Flow {
    if (this.callStack.includes(name)) {
      if (ctx.inPipeline || ctx.background) this.add("critical", "command.fork-bomb", `${name} calls itself in a pipeline or in the background: a fork bomb`, span, name);
      else this.add("medium", "function.recursive", `${name} calls itself`, span, name);
      return EMPTY_FLOW;
    }
    if (args.length === 0) return EMPTY_FLOW; // the body was analysed at its definition with unknown arguments
    this.callStack.push(name);
    try {
      return this.visit(def.body, { ...def.scope, positional: args.map((a) => a.value) }, ctx);
    } finally {
      this.callStack.pop();
    }
  }

  // -------------------------------------------------------------------------
  // Simple commands

  private word(node: Node, scope: Scope, lookup: VariableLookup): Word {
    const flow = this.visit(node, scope, { ...ROOT_CTX });
    const r = resolveNode(node, lookup);
    return {
      value: r.value,
      raw: node.text,
      span: this.span(node, scope),
      quoted: r.quoted,
      usesVariable: r.usesVariable,
      usesIfs: r.usesIfs,
      glob: r.glob,
      flow: { network: flow.network, decoder: flow.decoder, literal: null },
      verbatim: this.verbatimFor(node, r.value, scope),
    };
  }

  private verbatimFor(node: Node, value: string | null, scope: Scope): Verbatim | null {
    if (value === null || value.includes(FIELD_BREAK)) return null;
    for (const offset of [node.startIndex, node.startIndex + 1, node.startIndex + 2]) {
      if (offset + value.length <= node.endIndex && scope.source.slice(offset, offset + value.length) === value) return { scope, offset };
    }
    return null;
  }

  /** Splits one resolved word into the fields bash would produce (`$IFS`, unquoted variables). */
  private fields(word: Word): Word[] {
    if (word.value === null || !word.value.includes(FIELD_BREAK)) return [word];
    return splitFields(word.value).map((value) => ({ ...word, value, verbatim: null }));
  }

  private command(node: Node, scope: Scope, ctx: Ctx): Flow {
    const span = this.span(node, scope);
    if (!this.spend(span)) return EMPTY_FLOW;
    const lookup = this.lookup(scope);
    const parts: Node[] = [];
    const assignments: Node[] = [];
    const redirectNodes: Node[] = [];
    node.children.forEach((c, i) => {
      if (!c) return;
      const field = node.fieldNameForChild(i);
      if (field === "name") {
        const inner = c.firstNamedChild ?? c;
        parts.push(inner);
      } else if (field === "argument") parts.push(c);
      else if (field === "redirect" || c.type.endsWith("_redirect")) redirectNodes.push(c);
      else if (c.type === "variable_assignment") assignments.push(c);
    });
    for (const a of assignments) this.assignment(a, scope, false);
    const r = this.redirects(redirectNodes, scope);
    const inner: Ctx = { ...ctx, stdin: r.stdin ?? ctx.stdin, devTcp: ctx.devTcp || r.devTcp };

    // Backslash-newline inside a word joins it in bash, but the grammar treats it
    // as a separator: `r\<newline>m` must become `rm`, not `r` with argument `m`.
    // Parts with no gap at all are one shell word the grammar split (`-rf$IFS/x`).
    const groups: Node[][] = [];
    for (const part of parts) {
      const last = groups[groups.length - 1];
      const prev = last?.[last.length - 1];
      const gap = prev ? scope.source.slice(prev.endIndex, part.startIndex) : " ";
      if (last && prev && (gap === "" || /^(\\\r?\n)+$/.test(gap))) last.push(part);
      else groups.push([part]);
    }
    const words: Word[] = [];
    for (const group of groups) {
      words.push(...this.fields(group.length === 1 ? this.word(group[0]!, scope, lookup) : this.joinedWord(group, scope, lookup)));
    }
    if (words.length === 0 && parts.length > 0) {
      const w = this.word(parts[0]!, scope, lookup);
      this.add("high", w.usesIfs ? "evasion.ifs" : "name.dynamic", `the command expands to nothing (${w.raw}); what runs depends on run-time state`, w.span);
    }

    const out = this.classify(words, scope, inner, span);
    const name = words[0]?.value ?? null;
    r.finish(out, name === null ? null : name.slice(name.lastIndexOf("/") + 1));
    if (r.pipeTail.length) return this.pipeline(r.pipeTail, scope, ctx, out, { via: "pipe", flow: out, span: this.span(r.pipeTail[0]!, scope) });
    for (const tail of r.listTail) this.visit(tail, scope, ctx);
    return out;
  }

  /**
   * One shell word the grammar returned in pieces. A piece that ends in a bare
   * `$` followed by a word is tree-sitter-bash splitting `$NAME` in the middle
   * of a word; it is re-read as the parameter expansion bash would perform.
   */
  private joinedWord(group: readonly Node[], scope: Scope, lookup: VariableLookup): Word {
    const pieces = group.map((n) => this.word(n, scope, lookup));
    let value: string | null = "";
    let usesVariable = pieces.some((p) => p.usesVariable);
    let usesIfs = pieces.some((p) => p.usesIfs);
    let pendingDollar = false;
    group.forEach((node, i) => {
      const piece = pieces[i]!;
      let text: string | null = piece.value;
      const children = node.type === "concatenation" ? node.children : [];
      const trailingDollar = node.type === "$" || (children.length > 0 && children[children.length - 1]?.type === "$");
      if (trailingDollar) {
        const head = node.type === "$" ? [] : children.slice(0, -1).filter((c): c is Node => c !== null);
        const parts = head.map((c) => resolveNode(c, lookup));
        text = parts.some((p) => p.value === null) ? null : parts.map((p) => p.value).join("");
      }
      if (pendingDollar && text !== null) {
        const m = /^([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])([\s\S]*)$/.exec(node.type === "word" ? node.text : "");
        if (m) {
          usesVariable = true;
          const expanded = m[1] === "IFS" ? FIELD_BREAK : lookup.get(m[1]!);
          if (m[1] === "IFS") usesIfs = true;
          const rest = resolveNode(node, { get: () => undefined }).value;
          text = expanded === undefined || rest === null ? null : (typeof expanded === "string" ? expanded : expanded.join(FIELD_BREAK)).replace(/[ \t\n]+/g, FIELD_BREAK) + rest.slice(m[1]!.length);
        }
      }
      pendingDollar = trailingDollar;
      value = value === null || text === null ? null : value + text;
    });
    return {
      value,
      raw: scope.source.slice(group[0]!.startIndex, group[group.length - 1]!.endIndex),
      span: { start: pieces[0]!.span.start, end: pieces[pieces.length - 1]!.span.end },
      quoted: pieces.some((p) => p.quoted) || group.some((n, i) => i > 0 && n.startIndex !== group[i - 1]!.endIndex),
      usesVariable,
      usesIfs,
      glob: pieces.some((p) => p.glob),
      flow: mergeFlows(pieces.map((p) => p.flow)),
      verbatim: null,
    };
  }

  /** Classifies a command given as words; used for simple commands and for what wrappers run. */
  private classify(words: readonly Word[], scope: Scope, ctx: Ctx, span: Span, depth = 0): Flow {
    const [nameWord, ...args] = words;
    const inherited: Flow = { network: ctx.stdin?.flow.network ?? false, decoder: ctx.stdin?.flow.decoder ?? false, literal: null };
    if (!nameWord) return inherited;
    if (depth > 16) {
      this.add("high", "parse.too-deep", "wrappers nested too deeply", span);
      return inherited;
    }
    this.commandLines.push({ text: words.map((w) => w.value ?? w.raw).join(" "), command: nameWord.value ?? nameWord.raw, span });
    if (nameWord.value === null) {
      if (nameWord.flow.network) this.add("critical", "dynamic.remote-code", `runs a command whose name comes from the network (${nameWord.raw})`, nameWord.span);
      else if (nameWord.flow.decoder) this.add("critical", "dynamic.decoded-code", `runs a command whose name is decoded at run time (${nameWord.raw})`, nameWord.span);
      this.add("high", "name.dynamic", `the command name is only known at run time (${nameWord.raw})`, nameWord.span);
      return inherited;
    }
    let name = nameWord.value;
    if (nameWord.usesIfs) this.add("high", "evasion.ifs", `the command is assembled with $IFS (resolves to ${name})`, nameWord.span, name);
    else if (nameWord.usesVariable) this.add("high", "name.dynamic", `the command name comes from a variable (resolves to ${name})`, nameWord.span, name);
    if (nameWord.quoted && !nameWord.usesIfs) this.add("medium", "name.obfuscated", `the command name is quoted or escaped (${nameWord.raw} is ${name})`, nameWord.span, name);
    if (name === "") {
      this.add("high", "name.dynamic", "the command name is empty after expansion", nameWord.span);
      return inherited;
    }

    if (name.includes("/")) {
      const normal = normalisePath(name);
      const dir = normal.slice(0, normal.lastIndexOf("/")) || "/";
      const base = normal.slice(normal.lastIndexOf("/") + 1);
      if (!SYSTEM_BIN_DIRS.has(dir) || nameWord.glob) {
        if (this.downloaded.has(normal)) this.add("critical", "dynamic.download-execute", `runs ${name}, which this text downloaded from the network`, nameWord.span, name);
        this.add("high", "command.local-executable", `runs a program by path (${name}); its content is not known`, nameWord.span, name);
      }
      name = base;
    }

    if (nameWord.glob) {
      this.add("high", "name.glob", `the command name is a glob (${nameWord.raw}); it runs whatever file matches`, nameWord.span, name);
      const re = globToRegExp(name);
      const candidates = catalogueNames().filter((n) => re.test(n)).slice(0, 40);
      let flow = inherited;
      for (const candidate of candidates) {
        const w: Word = { ...nameWord, value: candidate, glob: false, quoted: false, usesVariable: false, usesIfs: false };
        flow = mergeFlows([flow, this.classify([w, ...args], scope, ctx, span, depth + 1)]);
      }
      return flow;
    }

    const fn = this.functions.get(name);
    let flow = inherited;
    if (fn) {
      this.add("read_only", "function.call", `calls the function ${name} defined in this text`, span, name);
      flow = mergeFlows([flow, this.callFunction(name, fn, args, span, ctx)]);
      if (!lookupCommand(name)) return flow;
    }
    const alias = this.aliases.get(name);
    if (alias !== undefined && !this.callStack.includes("alias " + name)) {
      this.callStack.push("alias " + name);
      try {
        const argText = args.map((a) => a.raw).join(" ");
        this.analyseNested(alias + (argText ? " " + argText : ""), scope, null, span, ctx);
      } finally {
        this.callStack.pop();
      }
      if (!lookupCommand(name)) return flow;
    }

    const spec = lookupCommand(name);
    if (!spec) {
      if (!fn && alias === undefined) this.add("medium", "command.unknown", `${name} is not in the command catalogue`, span, name);
      return flow;
    }
    const values = args.map((a) => a.value);
    const effects = spec.classify(values, name, { cwds: this.cwds });
    if (name === "cd" || name === "pushd") this.changeDirectory(name, values);
    const produced = this.applyEffects(effects, name, args, scope, ctx, span, depth);
    for (const evaluated of evaluatedArguments(name, args.map((a) => a.value))) this.evaluatedArgument(evaluated, name, args, scope);
    return { network: flow.network || produced.network, decoder: flow.decoder || produced.decoder, literal: produced.literal };
  }

  // eslint-disable-next-line max-lines-per-function -- one switch over the closed list of effect kinds a command can have; each case is a few lines and they share the flow being built
  private applyEffects(effects: readonly Effect[], name: string, args: readonly Word[], scope: Scope, ctx: Ctx, span: Span, depth: number): Flow {
    const flow: Flow = { network: ctx.stdin?.flow.network ?? false, decoder: ctx.stdin?.flow.decoder ?? false, literal: null };
    const argSpan = (i: number | undefined): Span => (i !== undefined && args[i] ? args[i]!.span : span);
    for (const e of effects) {
      switch (e.kind) {
        case "finding":
          this.add(e.level, e.rule, e.message, argSpan(e.arg), name);
          break;
        case "network":
          flow.network = true;
          break;
        case "decoder":
          flow.decoder = true;
          break;
        case "literal-output": {
          const rest = args.slice(e.arg);
          const single = rest.length === 1 ? rest[0]!.verbatim : null;
          flow.literal = { text: e.text, verbatim: single, span: rest.length ? { start: rest[0]!.span.start, end: rest[rest.length - 1]!.span.end } : span };
          break;
        }
        case "downloads-to": {
          const target = args[e.arg]?.value;
          if (target) this.downloaded.add(normalisePath(target));
          break;
        }
        case "passthrough":
          flow.literal = ctx.stdin?.flow.literal ?? null;
          break;
        case "exec": {
          const unknown = (w: Word): Word => ({ ...w, value: null, verbatim: null });
          let inner = args.slice(e.from, e.to);
          /** The same command with the replaced word only known at run time (see below). */
          let alsoUnknown: Word[] | null = null;
          if (e.replace) {
            const { token, many } = e.replace;
            const replacement = e.replace.with === null ? null : (args[e.replace.with] ?? null);
            const replaceWith = (value: string | null): Word[] =>
              inner.flatMap((w) => {
                if (w.value === token) {
                  const replaced = { ...w, value, verbatim: null };
                  // `{} +` stands for many files: a program whose second operand is an output sees it.
                  return many ? [replaced, replaced] : [replaced];
                }
                // find replaces `{}` inside a word too (`--file={}`): its value is only known at run time.
                return w.value !== null && w.value.includes(token) ? [unknown(w)] : [w];
              });
            // The starting point finds the targets a destructive command hits (`find / -exec rm -rf {}`);
            // the files below it have names only known at run time, which a program may read as code
            // (`find /tmp -exec awk {} \;` runs a file named `{system("id")}` as an awk program).
            const root = replacement ? replacement.value : null;
            if (root !== null) alsoUnknown = replaceWith(null);
            inner = replaceWith(root);
          }
          if (e.unknownToken) inner = inner.map((w) => (w.value !== null && w.value.includes(e.unknownToken!) ? unknown(w) : w));
          if (e.argsUnknown) {
            // Any number of words read at run time, options included: two stand for "more than one".
            const input: Word = { value: null, raw: "(input)", span, quoted: false, usesVariable: false, usesIfs: false, glob: false, flow: EMPTY_FLOW, verbatim: null };
            inner = [...inner, input, input];
          }
          const before = this.findings.length;
          if (inner.length) {
            const f = this.classify(inner, scope, ctx, span, depth + 1);
            flow.network ||= f.network;
            flow.decoder ||= f.decoder;
            flow.literal = f.literal;
          }
          if (alsoUnknown?.length) {
            // Only what this second reading adds above read-only is kept; the rest repeats the first.
            const first = this.findings.length;
            const lines = this.commandLines.length;
            this.classify(alsoUnknown, scope, ctx, span, depth + 1);
            const extra = this.findings.splice(first).filter((f) => f.level !== "read_only");
            this.findings.push(...extra);
            this.commandLines.splice(lines);
          }
          if (e.hold) {
            const added = this.findings.slice(before);
            const readOnly = added.some((f) => f.rule === "command.read-only") && added.every((f) => f.level === "read_only");
            if (!readOnly) this.add(e.hold.level, e.hold.rule, e.hold.message, argSpan(e.hold.arg), name);
          }
          break;
        }
        case "shell-code":
          this.shellCode(e, name, args, scope, ctx, span);
          break;
        case "stdin-code":
          this.stdinCode(e.shell, name, scope, ctx, span);
          break;
        case "script-file":
          this.scriptFile(args[e.arg], e.rule, name, scope, ctx, span);
          break;
        case "opaque-code": {
          const w = args[e.arg];
          if (!w) this.add("high", "parse.error", `${name} expects code after its option`, span, name);
          else if (w.flow.network) this.add("critical", "dynamic.remote-code", `${name} runs code fetched from the network`, w.span, name);
          else if (w.flow.decoder) this.add("critical", "dynamic.decoded-code", `${name} runs code decoded at run time`, w.span, name);
          else this.add("high", "dynamic.interpreter-code", `${name} runs inline code that is not shell and is not analysed`, w.span, name);
          break;
        }
        case "alias": {
          const w = args[e.arg]!;
          const value = w.value!;
          const eq = value.indexOf("=");
          const aliasName = value.slice(0, eq);
          const text = value.slice(eq + 1);
          this.add("medium", "alias.definition", `defines the alias ${aliasName}`, w.span, aliasName);
          this.aliases.set(aliasName, text);
          const verbatim = w.verbatim ? { scope: w.verbatim.scope, offset: w.verbatim.offset + eq + 1 } : null;
          if (text.trim()) this.analyseNested(text, scope, verbatim, w.span, { ...ROOT_CTX });
          break;
        }
      }
    }
    return flow;
  }

  private shellCode(e: Extract<Effect, { kind: "shell-code" }>, name: string, args: readonly Word[], scope: Scope, ctx: Ctx, span: Span): void {
    const words = e.join ? args.slice(e.arg) : args.slice(e.arg, e.arg + 1);
    if (words.length === 0) {
      this.add("high", "parse.error", `${e.what} has no code`, span, name);
      return;
    }
    const codeSpan = { start: words[0]!.span.start, end: words[words.length - 1]!.span.end };
    const network = words.some((w) => w.flow.network);
    const decoder = words.some((w) => w.flow.decoder);
    const value = words.some((w) => w.value === null) ? null : words.map((w) => w.value).join(" ");
    if (network) this.add("critical", "dynamic.remote-code", `${e.what} runs code fetched from the network`, codeSpan, name);
    else if (decoder) this.add("critical", "dynamic.decoded-code", `${e.what} runs code decoded at run time`, codeSpan, name);
    if (value === null) {
      this.add("high", e.rule, `${e.what} runs code that is only known at run time`, codeSpan, name);
      return;
    }
    this.add(e.floor, e.rule, `${e.what} runs shell code; it is parsed and analysed too`, codeSpan, name);
    if (!value.trim()) return;
    const verbatim = words.length === 1 ? words[0]!.verbatim : null;
    this.analyseNested(value.split(FIELD_BREAK).join(" "), scope, verbatim, codeSpan, { ...ROOT_CTX, stdin: ctx.stdin });
  }

  /** `mapfile -C CODE`, `compgen -W WORDS`: a quoted argument the builtin evaluates (programs.ts). */
  private evaluatedArgument(e: EvaluatedArgument, name: string, args: readonly Word[], scope: Scope): void {
    const word = args[e.arg]!;
    if (word.flow.network) this.add("critical", "dynamic.remote-code", `${e.what} evaluates text fetched from the network as shell code`, word.span, name);
    else if (word.flow.decoder) this.add("critical", "dynamic.decoded-code", `${e.what} evaluates text decoded at run time as shell code`, word.span, name);
    if (e.value === null) {
      this.add("high", "dynamic.shell-code", `${e.what} evaluates text only known at run time as shell code`, word.span, name);
      return;
    }
    const code = e.value.split(FIELD_BREAK).join(" ");
    if (e.as === "words") {
      if (!/[$`]/.test(code)) return;
      this.add("medium", "dynamic.shell-code", `${e.what} expands each word of its list, which runs the command substitutions in it; it is parsed and analysed too`, word.span, name);
      this.analyseNested(`: ${code}`, scope, null, word.span, { ...ROOT_CTX });
      return;
    }
    this.add("medium", "dynamic.shell-code", `${e.what} runs its callback as shell code, with the index and the line read appended; it is parsed and analysed too`, word.span, name);
    // The appended words are data read at run time: unknown positional parameters stand for them.
    const inner = this.nestedScope(scope, null, word.span, null);
    inner.source = `${code} "$@"`;
    this.analyseText(inner.source, inner, { ...ROOT_CTX });
  }

  private stdinCode(shell: boolean, name: string, scope: Scope, ctx: Ctx, span: Span): void {
    const stdin = ctx.stdin;
    if (!stdin) {
      this.add("high", "dynamic.stdin-code", `${name} reads its program from stdin, which is not part of the analysed text`, span, name);
      return;
    }
    if (stdin.via === "file") {
      this.scriptFileByPath(stdin.path ?? null, stdin.flow, "dynamic.script-file", name, stdin.span);
      return;
    }
    if (stdin.flow.network) {
      this.add("critical", "dynamic.remote-code", `${name} runs code fetched from the network`, span, name);
      return;
    }
    if (stdin.flow.decoder) {
      this.add("critical", "dynamic.decoded-code", `${name} runs code that was decoded (base64, hex, escapes) at run time`, span, name);
      return;
    }
    const literal = stdin.flow.literal;
    if (!literal) {
      this.add("high", "dynamic.stdin-code", `${name} runs whatever arrives on its stdin (${stdin.via})`, span, name);
      return;
    }
    if (!shell) {
      this.add("high", "dynamic.interpreter-code", `${name} is fed code through ${stdin.via} that is not shell and is not analysed`, literal.span, name);
      return;
    }
    this.add("medium", "dynamic.stdin-code", `${name} runs shell code from ${stdin.via === "the action's stdin" ? stdin.via : "its " + stdin.via}; it is parsed and analysed too`, literal.span, name);
    this.analyseNested(literal.text, scope, literal.verbatim, literal.span, { ...ROOT_CTX });
  }

  private scriptFile(word: Word | undefined, rule: string, name: string, scope: Scope, ctx: Ctx, span: Span): void {
    if (!word) {
      this.add("high", rule, `${name} runs a script`, span, name);
      return;
    }
    if (word.value === "/dev/stdin" || word.value === "-" || word.value === "/proc/self/fd/0") {
      this.stdinCode(true, name, scope, ctx, span);
      return;
    }
    this.scriptFileByPath(word.value, word.flow, rule, name, word.span);
  }

  private scriptFileByPath(path: string | null, flow: Flow, rule: string, name: string, span: Span): void {
    if (flow.network) this.add("critical", "dynamic.remote-code", `${name} runs a script fetched from the network`, span, name);
    else if (flow.decoder) this.add("critical", "dynamic.decoded-code", `${name} runs a script decoded at run time`, span, name);
    else if (path !== null && this.downloaded.has(normalisePath(path))) this.add("critical", "dynamic.download-execute", `${name} runs ${path}, which this text downloaded from the network`, span, name);
    this.add("high", rule, `${name} runs code from ${path ?? "a file only known at run time"}, whose content is not analysed`, span, name);
  }
}
