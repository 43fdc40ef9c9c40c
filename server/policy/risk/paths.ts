import { readsCredential, type CredentialReadOptions } from "./credentials";

/**
 * Lexical classification of a path the shell would touch. Static analysis sees
 * the text, not the file system: symlinks, the working directory and bind
 * mounts are invisible here, which is why the sandbox (not this module) is what
 * keeps a write inside the workspace. These classes only decide how loudly a
 * person is asked.
 */
export type PathClass =
  | "discard" // /dev/null and friends: writing there changes nothing
  | "device" // raw block devices and kernel memory: writing destroys a disk or the kernel
  | "root" // `/`, a top-level system directory, or a home directory as a whole
  | "system" // inside a system directory
  | "user-secret" // credentials, shell start-up files, persistence hooks
  | "outside" // some other absolute path, or one that climbs out with `..`
  | "temp" // scratch space
  | "workspace" // relative, stays below the working directory
  | "dynamic"; // not known before run time

const DISCARD = new Set(["/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/full"]);
const DEVICE_PREFIXES = [
  "/dev/sd", "/dev/hd", "/dev/vd", "/dev/xvd", "/dev/nvme", "/dev/mmcblk", "/dev/md", "/dev/dm-",
  "/dev/mapper/", "/dev/disk/", "/dev/mem", "/dev/kmem", "/dev/port", "/dev/sr", "/dev/nbd", "/dev/rbd",
];
const TOP_LEVEL = new Set([
  "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc",
  "/root", "/run", "/sbin", "/srv", "/sys", "/usr", "/var", "/snap", "/mnt", "/media",
]);
const SYSTEM_PREFIXES = [
  "/bin/", "/boot/", "/dev/", "/etc/", "/lib/", "/lib32/", "/lib64/", "/libx32/", "/proc/", "/root/",
  "/sbin/", "/sys/", "/usr/", "/var/lib/", "/var/spool/", "/var/backups/", "/var/mail/", "/snap/",
];
const TEMP_PREFIXES = ["/tmp/", "/var/tmp/", "/dev/shm/"];
/** Basenames that grant persistence or hold credentials wherever they live. */
const SECRET_NAMES = new Set([
  ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile", ".zshenv",
  ".zlogin", ".cshrc", ".tcshrc", ".kshrc", ".inputrc", ".netrc", ".pgpass", ".git-credentials",
  "authorized_keys", "authorized_keys2", "known_hosts", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519",
  ".npmrc", ".pypirc", ".env", "credentials", ".gitconfig", "sudoers", "shadow", "gshadow", "passwd",
]);
const SECRET_DIRS = [".ssh/", ".gnupg/", ".aws/", ".kube/", ".docker/", ".config/gcloud/", ".azure/", ".git/hooks/", ".config/autostart/", ".config/systemd/"];

/** Collapses `//`, `/./` and `..` the way the kernel would for a path without symlinks. */
export function normalisePath(path: string): string {
  const absolute = path.startsWith("/");
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!absolute) out.push("..");
      continue;
    }
    out.push(part);
  }
  return (absolute ? "/" : "") + out.join("/");
}

function expandHome(path: string): string | null {
  if (path === "~" || path.startsWith("~/")) return "/~home" + path.slice(1);
  // ~user: someone else's home, whose files are as sensitive as ours.
  if (path.startsWith("~")) return path.includes("/") ? "/~home" + path.slice(path.indexOf("/")) : "/~home";
  return null;
}

/** A glob that could match everything in a directory counts as the directory. */
function stripTrailingGlob(path: string): string {
  let p = path;
  while (/\/\*+$/.test(p) || /\/\.\*$/.test(p)) p = p.replace(/\/(\*+|\.\*)$/, "") || "/";
  return p === "" ? "/" : p;
}

export function classifyPath(raw: string | null): PathClass {
  if (raw === null || raw === "") return "dynamic";
  if (DISCARD.has(raw) || /^\/dev\/fd\/\d+$/.test(raw) || /^\/proc\/self\/fd\/\d+$/.test(raw)) return "discard";
  if (DEVICE_PREFIXES.some((p) => raw.startsWith(p))) return "device";
  const home = expandHome(raw);
  const text = home ?? raw;
  const normal = normalisePath(stripTrailingGlob(text));
  const base = normal.slice(normal.lastIndexOf("/") + 1);
  const withSlash = normal.endsWith("/") ? normal : normal + "/";
  if (home !== null) {
    if (normal === "/~home") return "root";
    const rel = normal.slice("/~home/".length) + "/";
    if (SECRET_DIRS.some((d) => rel.startsWith(d)) || SECRET_NAMES.has(base)) return "user-secret";
    return "outside";
  }
  if (SECRET_DIRS.some((d) => withSlash.includes("/" + d) || withSlash.startsWith(d))) return "user-secret";
  if (normal.startsWith("/")) {
    if (TOP_LEVEL.has(normal)) return "root";
    if (/^\/home\/[^/]+$/.test(normal)) return "root";
    if (TEMP_PREFIXES.some((p) => withSlash.startsWith(p)) || normal === "/tmp" || normal === "/var/tmp") return "temp";
    if (SECRET_NAMES.has(base)) return normal.startsWith("/etc/") ? "system" : "user-secret";
    if (SYSTEM_PREFIXES.some((p) => withSlash.startsWith(p))) return "system";
    return "outside";
  }
  if (SECRET_NAMES.has(base)) return "user-secret";
  if (normal === ".." || normal.startsWith("../")) return "outside";
  return "workspace";
}

/** Reading `raw` discloses a credential (credentials.ts has the list and the glob matching). */
export function isSecretRead(raw: string | null, options: CredentialReadOptions = {}): boolean {
  return readsCredential(raw, options);
}
