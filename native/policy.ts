/**
 * The sandbox policy: its schema (every field the launcher takes, checked
 * with zod), the canonical spellings it accepts, and the environment every
 * workload starts from.
 */
import { z } from "zod";
import { parseEgressRule, type AddressEgressRule } from "../server/trust/egress";
import { HostPathLabel } from "../server/trust/host-paths";

/** An address rule (CIDR:port) in canonical text; a name rule is resolved by the guest before it reaches a sandbox. */
export function parseAddressRule(text: string): AddressEgressRule | undefined {
  const rule = parseEgressRule(text);
  return rule?.kind === "address" ? rule : undefined;
}

const noNul = (s: string) => !s.includes("\0");
const absPath = z.string().min(1).max(4096).refine((s) => s.startsWith("/") && noNul(s) && !s.split("/").includes(".."), {
  message: "must be an absolute path without '..' or NUL",
});
const MiB = 1024 * 1024;
/** A host uid/gid (not -1, which the kernel reads as "unchanged"). */
const hostId = z.number().int().min(0).max(2 ** 32 - 2);

/** An address egress rule in its one canonical spelling (server/trust/egress.ts), e.g. "10.0.0.0/8:443".
 * Always with a prefix: a name rule is resolved by the guest before launch, never passed here. */
const egressRule = z.string().max(64).refine((s) => s.includes("/") && parseEgressRule(s)?.text === s, {
  message: "must be a canonical CIDR:port rule, e.g. 10.0.0.0/8:443 or [2001:db8::/32]:443 (names are resolved before launch)",
});
/** RFC 1123 host name, lower case (one spelling per name in the sandbox's /etc/hosts and the evidence). */
const hostName = z.string().max(253).regex(/^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/, {
  message: "must be an RFC 1123 host name in lower case",
});
/** A single address in canonical text (dotted quad without leading zeros; RFC 5952 IPv6, hex groups
 * only — an IPv4-mapped address is written ::ffff:c000:201), the spelling of server/trust/egress.ts. */
export function canonicalHostAddress(text: string): string | undefined {
  const v6 = text.includes(":");
  const rule = v6 ? `[${text}/128]:1` : `${text}/32:1`;
  return parseEgressRule(rule)?.text === rule ? text : undefined;
}
const hostAddress = z.string().max(39).refine((s) => canonicalHostAddress(s) === s, {
  message: "must be one IPv4 or IPv6 address in canonical text",
});
/** Names the guest resolved (outside the sandbox, when the lease starts) → the sandbox's /etc/hosts. */
const hostsEntries = z
  .array(z.object({ name: hostName, addresses: z.array(hostAddress).min(1).max(32) }).strict())
  .max(64)
  .refine((h) => new Set(h.map((e) => e.name)).size === h.length, { message: "each name once" })
  .refine((h) => h.reduce((n, e) => n + e.addresses.length, 0) <= 256, { message: "at most 256 name/address pairs" });

/** A compiled sandbox policy (capability ∩ token scope ∩ request ∩ host ceiling). */
export const SandboxPolicy = z
  .object({
    argv: z.array(z.string().max(65536).refine(noNul)).min(1).max(256),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string().max(65536).refine(noNul)).default({}),
    /** host path bound at /work inside; the lease uid owns it while an "rw" lease runs */
    workdir: absPath,
    /** "ro" (an observe lease): the workspace is a read-only bind (kernel MOUNT_ATTR_RDONLY) with a
     * read-only Landlock rule, so nothing the lease runs changes it; its writes go only to throwaway /tmp.
     * Absent means "rw" (optional rather than defaulted so policies compiled before it stay valid values). */
    workdir_access: z.enum(["rw", "ro"]).optional(),
    /** working directory: /work or a directory below it (the workspace is always bound at /work);
     * one that does not exist inside makes exec_error "ENOENT" */
    cwd: absPath.refine((s) => s === "/work" || s.startsWith("/work/"), { message: "must be /work or below it" }).default("/work"),
    stdin: z.union([z.string(), z.instanceof(Uint8Array)]).default(""),
    /** "none": a network namespace with loopback only. Egress: the same namespace plus one veth pair to the
     * host (native/README.md "Network path"); the allow-list is enforced by the BPF tier, and a lease whose
     * allow-list is not attached in the kernel never starts. `hosts` become the sandbox's /etc/hosts. */
    network: z
      .union([
        z.literal("none"),
        z.object({ egress: z.array(egressRule).min(1).max(256), hosts: hostsEntries.optional() }).strict(),
      ])
      .default("none"),
    /** exec allow-list enforced in the kernel too (BPF tier): only regular files that were below
     * `exec_allow` when the lease started may be exec'd, whatever Landlock allows. */
    exec_kernel: z.boolean().optional(),
    memory_bytes: z.number().int().min(8 * MiB).max(64 * 1024 * MiB),
    cpus: z.number().min(0.01).max(256),
    pids_max: z.number().int().min(2).max(65536),
    tmpfs_tmp_bytes: z.number().int().min(64 * 1024).max(16 * 1024 * MiB).default(64 * MiB),
    tmpfs_tmp_inodes: z.number().int().min(16).max(1_000_000).default(16384),
    timeout_ms: z.number().int().min(1).max(24 * 3600 * 1000),
    stdout_max_bytes: z.number().int().min(0).max(256 * MiB).default(MiB),
    stderr_max_bytes: z.number().int().min(0).max(256 * MiB).default(MiB),
    /** directories (inside paths) whose files may be executed; enforced by Landlock */
    exec_allow: z.array(absPath).max(64).default(["/usr/bin", "/bin"]),
    /** extra host paths bound read-only at the same path inside */
    ro_binds: z.array(absPath).max(64).default([]),
    /** host directories bound at /host/<label> (native/README.md "Host paths"): opened by the helper
     * without following any symlink, "ro" read-only, "rw" through an idmapped mount so that what the
     * workload writes belongs on the host to `owner` (absent: the opened directory's own owner); each gets
     * a Landlock rule of its mode */
    host_paths: z
      .array(
        z
          .object({ label: HostPathLabel, path: absPath.refine((p) => p !== "/", { message: "must not be /" }), mode: z.enum(["ro", "rw"]), owner: z.object({ uid: hostId, gid: hostId }).strict().optional() })
          .strict()
          .refine((h) => h.mode === "rw" || h.owner === undefined, { message: "an ro host path has no owner" }),
      )
      .max(32)
      .refine((h) => new Set(h.map((e) => e.label)).size === h.length, { message: "each label once" })
      .default([]),
    landlock: z
      .object({
        required: z.boolean().default(true),
        min_abi: z.number().int().min(1).max(64).default(1),
        fs: z.array(z.object({ path: absPath, access: z.enum(["ro", "rw"]) }).strict()).max(64).default([]),
        tcp_connect: z.array(z.number().int().min(1).max(65535)).max(64).default([]),
        tcp_bind: z.array(z.number().int().min(1).max(65535)).max(64).default([]),
        /** signal + abstract unix socket scoping (ABI 6) */
        scope: z.boolean().default(true),
      })
      .strict()
      .default({ required: true, min_abi: 1, fs: [], tcp_connect: [], tcp_bind: [], scope: true }),
  })
  .strict();
export type SandboxPolicyInput = z.input<typeof SandboxPolicy>;
export type SandboxPolicy = z.output<typeof SandboxPolicy>;

/**
 * Every workload's environment, under the policy's own `env` (a name the
 * policy sets wins). HOME in the throwaway /tmp (git, pip and friends want
 * one); a UTF-8 locale (C.UTF-8 is built into glibc); Python that imports
 * nothing from the working directory or the script's directory
 * (PYTHONSAFEPATH, Python 3.11+) and writes no `__pycache__` into the
 * workspace: otherwise a `this.py` or `json.py` one job leaves in the
 * workspace runs inside every later `python3 -m this` / `-m json.tool` /
 * `-c` there. Nothing else reaches the workload — the helper executes it
 * with exactly this list — so the variables that make interpreters load code
 * (NODE_OPTIONS, NODE_PATH, PYTHONPATH, PYTHONSTARTUP, PYTHONHOME, PERL5LIB,
 * PERL5OPT, PERL_USE_UNSAFE_INC, RUBYLIB, RUBYOPT) are unset unless the
 * policy names them. Perl (5.26+) and Ruby keep `.` out of their search
 * paths by themselves; `node -e` resolves only what it is asked to require.
 */
export const SANDBOX_DEFAULT_ENV: Readonly<Record<string, string>> = Object.freeze({
  HOME: "/tmp",
  LANG: "C.UTF-8",
  PYTHONSAFEPATH: "1",
  PYTHONDONTWRITEBYTECODE: "1",
});
