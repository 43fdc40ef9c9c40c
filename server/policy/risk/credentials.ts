/**
 * Files whose mere reading discloses a credential, and the question "could
 * this path, as the shell will expand it, name one?". Paths are compared as
 * globs on both sides, segment by segment, so `/etc/sha*`, a `*` for `etc` and
 * `~root/.ssh/id_*` match the files they would expand to, and a directory
 * that holds credentials matches when the reader walks it recursively
 * (`grep -r x ~/.ssh`, `rg token ~`). Nothing here touches the file system:
 * a glob that COULD match a credential counts, whatever the disk holds.
 */

/** Home directories, spelled as the templates below expect them (`~` is replaced by each). */
const HOME_ROOTS = ["/root", "/home/*", "/Users/*"];

/** Absolute locations; `~/` means every home in HOME_ROOTS; a trailing `**` is everything below. */
const ANCHORED = [
  "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d/**", "/etc/security/opasswd",
  "/etc/ssh/ssh_host_*_key", "/etc/ssl/private/**", "/etc/kubernetes/admin.conf", "/etc/kubernetes/pki/**", "/etc/rancher/k3s/k3s.yaml",
  "/proc/*/environ", "/proc/*/mem", "/var/lib/docker/swarm/**",
  "~/.ssh/id_rsa", "~/.ssh/id_dsa", "~/.ssh/id_ecdsa", "~/.ssh/id_ed25519", "~/.ssh/id_ecdsa_sk", "~/.ssh/id_ed25519_sk", "~/.ssh/identity",
  "~/.aws/credentials", "~/.aws/sso/cache/**", "~/.aws/cli/cache/**", "~/.kube/config", "~/.docker/config.json",
  "~/.config/gcloud/**", "~/.azure/**", "~/.config/gh/hosts.yml", "~/.config/hub", "~/.config/git/credentials",
  "~/.gnupg/**", "~/.password-store/**", "~/.vault-token", "~/.terraform.d/credentials.tfrc.json",
  "~/.cargo/credentials", "~/.cargo/credentials.toml", "~/.gem/credentials", "~/.local/share/keyrings/**",
];

/** Names that are credentials wherever they live (a relative path after `cd`, a project's own `.npmrc`). */
const ANYWHERE = [
  ".netrc", ".pgpass", ".git-credentials", ".npmrc", ".pypirc", ".vault-token", "shadow", "gshadow", "id_rsa", "id_dsa", "id_ecdsa",
  "id_ed25519", "ssh_host_*_key", "credentials", "credentials.toml", "credentials.tfrc.json",
];

const TEMPLATES: readonly string[][] = [
  ...ANCHORED.flatMap((t) => (t.startsWith("~/") ? HOME_ROOTS.map((h) => h + t.slice(1)) : [t])).map(segments),
];
const ANYWHERE_SEGMENTS = ANYWHERE.map((n) => [n]);

function segments(path: string): string[] {
  return path.split("/").filter((s) => s !== "" && s !== ".");
}

type Token = { kind: "char"; ch: string } | { kind: "any" } | { kind: "star" } | { kind: "class"; text: string; negated: boolean };

function tokens(glob: string): Token[] {
  const out: Token[] = [];
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === "\\" && i + 1 < glob.length) out.push({ kind: "char", ch: glob[++i]! });
    else if (ch === "*") {
      if (out[out.length - 1]?.kind !== "star") out.push({ kind: "star" });
    } else if (ch === "?") out.push({ kind: "any" });
    else if (ch === "[") {
      const close = glob.indexOf("]", i + 2);
      if (close === -1) out.push({ kind: "char", ch });
      else {
        const body = glob.slice(i + 1, close);
        const negated = body.startsWith("!") || body.startsWith("^");
        out.push({ kind: "class", text: negated ? body.slice(1) : body, negated });
        i = close;
      }
    } else out.push({ kind: "char", ch });
  }
  return out;
}

function classHas(text: string, ch: string): boolean {
  for (let i = 0; i < text.length; i++) {
    if (text[i + 1] === "-" && i + 2 < text.length) {
      if (ch >= text[i]! && ch <= text[i + 2]!) return true;
      i += 2;
    } else if (text[i] === ch) return true;
  }
  return false;
}

/** Could one character match both tokens? Two classes are assumed to overlap (erring towards a match). */
function overlap(a: Token, b: Token): boolean {
  if (a.kind === "any" || b.kind === "any") return true;
  if (a.kind === "char" && b.kind === "char") return a.ch === b.ch;
  if (a.kind === "class" && b.kind === "char") return classHas(a.text, b.ch) !== a.negated;
  if (b.kind === "class" && a.kind === "char") return classHas(b.text, a.ch) !== b.negated;
  return true;
}

/** Is there a string both globs match? (`*`, `?`, `[...]` on either side; no `/` inside a segment.) */
export function globsIntersect(a: string, b: string): boolean {
  const x = tokens(a);
  const y = tokens(b);
  const memo = new Map<number, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = i * (y.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (i === x.length && j === y.length) result = true;
    else if (i < x.length && x[i]!.kind === "star") result = go(i + 1, j) || (j < y.length && go(i, j + 1));
    else if (j < y.length && y[j]!.kind === "star") result = go(i, j + 1) || (i < x.length && go(i + 1, j));
    else if (i < x.length && j < y.length) result = overlap(x[i]!, y[j]!) && go(i + 1, j + 1);
    else result = false;
    memo.set(key, result);
    return result;
  };
  // A leading dot is only matched by a glob that spells it (bash without dotglob).
  if (b.startsWith(".") && !a.startsWith(".") && /^[*?[]/.test(a)) return false;
  return go(0, 0);
}

/**
 * How a path's segments relate to a template's: "inside" when the path names
 * the credential or something below a `**` template, "ancestor" when it is a
 * directory that contains it, null when neither.
 */
function relate(path: readonly string[], template: readonly string[]): "inside" | "ancestor" | null {
  const go = (i: number, j: number): "inside" | "ancestor" | null => {
    if (j < template.length && template[j] === "**") return "inside";
    if (i < path.length && path[i] === "**") {
      // globstar: any number of directories, so the rest may be anywhere below.
      for (let k = j; k <= template.length; k++) {
        const r = go(i + 1, k);
        if (r) return r;
      }
      return null;
    }
    if (i === path.length) return j === template.length ? "inside" : "ancestor";
    if (j === template.length) return null;
    return globsIntersect(path[i]!, template[j]!) ? go(i + 1, j + 1) : null;
  };
  return go(0, 0);
}

/** `~`, `~user`: someone's home; `~root` is /root. Other users' homes are all `/home/*` templates. */
function expandTilde(path: string): string {
  if (!path.startsWith("~")) return path;
  const slash = path.indexOf("/");
  const user = slash === -1 ? path.slice(1) : path.slice(1, slash);
  const rest = slash === -1 ? "" : path.slice(slash);
  return (user === "root" ? "/root" : "/home/" + (user === "" ? "~" : user)) + rest;
}

/** Collapses `.` and `..` (as the kernel would without symlinks); leading `..` of a relative path are kept. */
function normalise(path: string): string[] {
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === ".." && out.length > 0 && out[out.length - 1] !== "..") out.pop();
    else out.push(part);
  }
  return out;
}

/**
 * Where a command may run, for paths relative to it: the directories earlier
 * `cd`/`pushd` commands in the same text may have moved to (null: one only
 * known at run time). The action's own working directory always counts too.
 */
export interface Whereabouts {
  cwds?: readonly (string | null)[];
}

export interface CredentialReadOptions extends Whereabouts {
  /** The reader walks directories (grep -r, rg, tar c, cp -r): a directory holding credentials counts. */
  recursive?: boolean;
}

/**
 * The last segment of every credential location (`config` of `~/.kube/config`)
 * and every name that is one anywhere: after a `cd` to a directory only known
 * at run time, a relative path ending in one of these could be that file.
 */
const CREDENTIAL_BASENAMES = [...new Set([...TEMPLATES.map((t) => t[t.length - 1]!).filter((n) => n !== "**"), ...ANYWHERE])];

/** Does reading `raw` (a path or glob, resolved by the analyser) disclose a credential? */
export function readsCredential(raw: string | null, options: CredentialReadOptions = {}): boolean {
  if (raw === null || raw === "") return false;
  const recursive = options.recursive === true;
  if (readsCredentialFrom(raw, null, recursive)) return true;
  if (raw.startsWith("/") || raw.startsWith("~")) return false;
  return (options.cwds ?? []).some((cwd) => {
    if (cwd !== null) return readsCredentialFrom(raw, cwd, recursive);
    const last = normalise(raw).filter((p) => p !== "..").pop();
    return last !== undefined && CREDENTIAL_BASENAMES.some((name) => globsIntersect(last, name));
  });
}

/** `raw` read from `cwd` (null: the action's working directory, the workspace). */
function readsCredentialFrom(raw: string, cwd: string | null, recursive: boolean): boolean {
  let text = expandTilde(raw);
  if (!text.startsWith("/") && cwd !== null) text = expandTilde(cwd) + "/" + text;
  const parts = normalise(text);
  const accept = (r: "inside" | "ancestor" | null): boolean => r === "inside" || (r === "ancestor" && recursive);
  if (text.startsWith("/")) return TEMPLATES.some((t) => accept(relate(parts, t))) || ANYWHERE_SEGMENTS.some((t) => parts.length > 0 && accept(relate(parts.slice(-1), t)));
  // Relative, the working directory unknown: a distinctive name anywhere; or the tail of an
  // absolute location, when the path climbs out (`../../etc/shadow`) or names a hidden directory
  // (`.kube/config`) — never a project's own `private/` or a bare common name such as `config`.
  const climbs = parts[0] === "..";
  const rest = parts.filter((p) => p !== "..");
  if (rest.length === 0) return false;
  if (ANYWHERE_SEGMENTS.some((t) => relate(rest.slice(-1), t) === "inside")) return true;
  if (rest.length < 2) return false;
  return TEMPLATES.some((t) => {
    // The tail starts at a named directory, so `a/b` is never "anything below some `**`".
    for (let start = 1; start < t.length; start++) if (!/[*?[]/.test(t[start]!) && (climbs || t[start]!.startsWith(".")) && relate(rest, t.slice(start)) === "inside") return true;
    return false;
  });
}
