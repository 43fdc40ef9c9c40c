import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { HostPathEntry, LeaseholdError, MAX_EGRESS_RULE_LENGTH, MAX_HOST_PATHS, egressRuleAllowedBy, hostEgressRule, parseEgressRule, type CompiledMount, type EgressRule } from "../../server/trust";
import type { SandboxPolicy } from "../../native/index";

/**
 * The host ceiling: the most any job may get on this host, written by the
 * host's operator in a root-owned JSON file. Tier: guest check
 * (docs/design.md#enforcement — "what a host accepts at most").
 *
 * The rule: the sandbox gets the job's policy when, field by field, it lies
 * within the ceiling; otherwise the job is refused with POLICY_REFUSED naming
 * the first field that asks for more. Nothing is ever clamped — a job that
 * asked for 2 GiB and silently got 512 MiB would run under terms nobody
 * approved, and its evidence would describe a different action. Numeric
 * fields compare with <=; paths must equal or lie below an allowed directory
 * (lexically; both sides are normalised absolute paths); egress entries must
 * each be covered by one ceiling entry (same family and port, a prefix at
 * least as long, inside the ceiling network — the hub's own rule format and
 * comparison, server/trust/egress.ts, so a ceiling entry and a rule in a job
 * are spelled and compared alike). An egress policy that is
 * within the ceiling but needs a kernel tier this host lacks (tier C) is
 * UNENFORCEABLE — checked after the ceiling, so a request beyond the ceiling
 * is reported as such on every host.
 *
 * Names (`name:port`) in the ceiling and in jobs: a job's name rule is within
 * the ceiling when the ceiling carries the same name rule (same name, same
 * port) — then every address the name resolves to at lease start is allowed
 * on that port, whatever it is, because the operator named the name, not an
 * address range. Otherwise it is within the ceiling only when EVERY address
 * it resolved to, as a /32 or /128 with the rule's port, is covered by an
 * address rule of the ceiling — an operator who allows only 10.0.0.0/8 keeps
 * that promise whatever a job names. The first case is decided before
 * resolution (`checkEgressBeforeResolution`, with the tier check after it),
 * the second after it (`intersectPolicy` with the resolved names); a name
 * the ceiling neither names nor has any address rule for on that port is
 * refused before any lookup is made.
 */

const MiB = 1024 * 1024;
const MAX_CEILING_BYTES = 64 * 1024;
export const DEFAULT_WORKSPACE_MAX_BYTES = 1024 * MiB;
export const DEFAULT_WORKSPACE_MAX_INODES = 100_000;

const absPath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.includes("\0") && p.startsWith("/") && path.posix.normalize(p) === p && (p === "/" || !p.endsWith("/")), {
    message: "must be a normalised absolute path (no '.', '..', '//' or trailing '/')",
  });
const port = z.number().int().min(1).max(65535);
const within = (p: string, dir: string) => dir === "/" || p === dir || p.startsWith(`${dir}/`);
/** The one spelling of server/trust/egress.ts: what a job's compiled policy carries. */
const EGRESS_FORMAT = "<ipv4>/<len>:<port> or [<ipv6>/<len>]:<port> (RFC 5952 lower case, host bits clear) or <name>:<port> (lower-case RFC 1123 host name)";
const egressText = z.string().max(MAX_EGRESS_RULE_LENGTH).refine((text) => parseEgressRule(text) !== undefined, { message: `must be ${EGRESS_FORMAT}` });

export const HostCeiling = z
  .object({
    version: z.literal(1),
    /** Every job's workdir and every read-write path must lie in here. */
    workspace_root: absPath.refine((p) => p !== "/", { message: "the filesystem root cannot be the workspace root" }),
    /**
     * The workspace's kernel bound: the size and inode count of the ext4 image
     * mounted at workspace_root (agent-guest/workspace/volume.ts). Growing the
     * size later is done at the next start (resize2fs); shrinking it or
     * changing the inode count is refused.
     */
    workspace_max_bytes: z.number().int().min(4 * MiB).max(16 * 1024 * 1024 * MiB).default(DEFAULT_WORKSPACE_MAX_BYTES),
    workspace_max_inodes: z.number().int().min(16).max(2 ** 32 - 1).default(DEFAULT_WORKSPACE_MAX_INODES),
    /** Directories whose files a job may execute (exec_allow must lie inside). */
    exec_dirs: z.array(absPath).min(1).max(64),
    /** Further host paths a job may bind or allow read-only. */
    read_only_paths: z.array(absPath).max(64).optional(),
    /** The widest egress any job may ask for. Empty: network "none" only. */
    egress: z.array(egressText).max(256),
    /** Ports a job may bind (Landlock tcp_bind). Absent: none. */
    tcp_bind_ports: z.array(port).max(64).optional(),
    /**
     * Host directories a job may be given at `/host/<label>`, each with the
     * most it may get ("ro" or "rw"), the owner its writes belong to and the
     * budget its tree must fit (docs/design.md#ceiling). Absent: none.
     */
    host_paths: z.array(HostPathEntry).max(MAX_HOST_PATHS).optional(),
    /**
     * How many snapshots of "rw" host paths the guest keeps: per label by
     * count, and all by age and total bytes (docs/design.md#snapshots); each
     * label's newest is always kept. Absent fields: 10, 30 days, 16 GiB.
     */
    snapshots: z
      .object({ keep_per_label: z.number().int().min(1).max(10_000), max_age_s: z.number().int().min(60), max_bytes: z.number().int().min(0) })
      .partial()
      .strict()
      .optional(),
    /** When true (the default), a job that turns Landlock off is refused. */
    require_landlock: z.boolean().optional(),
    max: z
      .object({
        memory_bytes: z.number().int().min(8 * MiB),
        cpus: z.number().positive().max(1024),
        pids: z.number().int().min(2),
        timeout_ms: z.number().int().min(1),
        /** Per stream: stdout and stderr each. */
        output_bytes: z.number().int().min(0),
        tmpfs_bytes: z.number().int().min(64 * 1024),
        tmpfs_inodes: z.number().int().min(16),
      })
      .strict(),
  })
  .strict()
  .superRefine((c, ctx) => {
    const seen = new Set<string>();
    (c.host_paths ?? []).forEach((h, i) => {
      if (seen.has(h.label)) ctx.addIssue({ code: "custom", path: ["host_paths", i, "label"], message: `label ${h.label} is listed twice` });
      seen.add(h.label);
      // A host path inside the workspace would bypass the workspace's own
      // lease rules; one around it would hand a job every other job's files
      // and the workspace image's mount.
      if (within(h.path, c.workspace_root) || within(c.workspace_root, h.path)) {
        ctx.addIssue({ code: "custom", path: ["host_paths", i, "path"], message: `${h.path} overlaps the workspace root ${c.workspace_root}` });
      }
    });
  });
export type HostCeiling = z.infer<typeof HostCeiling>;

/** The host's enforcement tier (docs/design.md#tiers): A BPF-LSM, B cgroup-BPF + exec kill, C Landlock + seccomp + empty netns. */
export type HostTier = "A" | "B" | "C";

function configInvalid(file: string, reason: string): never {
  throw new LeaseholdError("CONFIG_INVALID", `host ceiling ${file} refused by the guest: ${reason}`, {
    tier: "guest",
    hint: "the ceiling file must be a regular JSON file owned by root, mode 0644 or stricter",
  });
}

/**
 * Loads the ceiling file. Refused (CONFIG_INVALID) unless it is a regular
 * file (not a symlink) owned by root and not writable by group or others,
 * at most 64 KiB, and valid against the strict schema. Ownership and mode are
 * checked on the opened descriptor, so what is parsed is what was checked.
 */
export function loadCeiling(file: string): HostCeiling {
  if (typeof file !== "string" || !path.isAbsolute(file)) configInvalid(String(file), "path must be absolute");
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ELOOP") configInvalid(file, "is a symlink");
    if (code === "ENOENT") configInvalid(file, "does not exist");
    configInvalid(file, `cannot be opened (${code ?? "error"})`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) configInvalid(file, "is not a regular file");
    if (st.uid !== 0) configInvalid(file, `is owned by uid ${st.uid}, not root`);
    if ((st.mode & 0o022) !== 0) configInvalid(file, `is writable by group or others (mode ${(st.mode & 0o777).toString(8)})`);
    if (st.size > MAX_CEILING_BYTES) configInvalid(file, `is larger than ${MAX_CEILING_BYTES} bytes`);
    const buf = Buffer.alloc(MAX_CEILING_BYTES + 1);
    let len = 0;
    for (;;) {
      const n = fs.readSync(fd, buf, len, buf.length - len, null);
      if (n === 0) break;
      len += n;
      if (len > MAX_CEILING_BYTES) configInvalid(file, `is larger than ${MAX_CEILING_BYTES} bytes`);
    }
    let json: unknown;
    try {
      json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(buf.subarray(0, len)));
    } catch (e) {
      configInvalid(file, `is not JSON: ${(e as Error).message}`);
    }
    return parseCeiling(json, file);
  } finally {
    fs.closeSync(fd);
  }
}

/** Validates a ceiling object (strict: unknown fields are refused). */
export function parseCeiling(value: unknown, source = "(inline)"): HostCeiling {
  const parsed = HostCeiling.safeParse(value);
  if (!parsed.success) {
    configInvalid(source, parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; "));
  }
  return parsed.data;
}

function beyond(field: string, message: string, asked: unknown, allowed: unknown): never {
  throw new LeaseholdError("POLICY_REFUSED", `host ceiling (guest check): ${field} ${message}; nothing was run`, {
    tier: "guest",
    details: { field, asked, allowed },
  });
}

function checkPath(field: string, p: string, dirs: readonly string[]): void {
  if (!dirs.some((d) => within(p, d))) beyond(field, `= ${p} is outside the host ceiling`, p, dirs);
}

function checkMax(field: string, asked: number, allowed: number): void {
  if (!(asked <= allowed)) beyond(field, `= ${asked} exceeds the host ceiling maximum ${allowed}`, asked, allowed);
}

/** A host path as the sandbox gets it: the ceiling's entry with the mode the job was given. */
export interface GrantedHostPath {
  label: string;
  path: string;
  mode: "ro" | "rw";
  owner?: { uid: number; gid: number };
}

/**
 * The host paths a job asks for, against the ceiling: each label must be
 * listed, with the same path, and "rw" only where the ceiling allows "rw";
 * otherwise POLICY_REFUSED naming the label. A label asked twice is refused
 * too (one mount per label). Returns the granted entries sorted by label,
 * carrying the ceiling's owner for "rw".
 */
export function checkHostPaths(mounts: readonly { label: string; path: string; mode: "ro" | "rw" }[], ceiling: HostCeiling): GrantedHostPath[] {
  const listed = new Map((ceiling.host_paths ?? []).map((h) => [h.label, h]));
  const seen = new Set<string>();
  const granted = mounts.map((m, i) => {
    const field = `mounts[${i}]`;
    if (seen.has(m.label)) beyond(field, `names label ${m.label} twice`, m.label, [...listed.keys()]);
    seen.add(m.label);
    const entry = listed.get(m.label);
    if (entry === undefined) beyond(field, `= ${m.label} is not a host path label of the host ceiling`, m.label, [...listed.keys()]);
    if (m.path !== entry.path) beyond(field, `= ${m.label} names ${m.path}, but the host ceiling's ${m.label} is ${entry.path}`, m.path, entry.path);
    if (m.mode === "rw" && entry.mode !== "rw") beyond(field, `= ${m.label} asks for rw, but the host ceiling lists ${m.label} ro`, m.mode, entry.mode);
    return { label: m.label, path: entry.path, mode: m.mode, ...(m.mode === "rw" && entry.owner !== undefined ? { owner: { ...entry.owner } } : {}) };
  });
  return granted.sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
}

/** The compiled policy's mounts (absent: none) against the ceiling: `checkHostPaths`. */
export function grantedMounts(mounts: readonly CompiledMount[] | undefined, ceiling: HostCeiling): GrantedHostPath[] {
  return checkHostPaths(mounts ?? [], ceiling);
}

/** A job's name rule with the addresses the guest resolved it to (agent-guest/egress). */
export interface ResolvedName {
  rule: string;
  name: string;
  port: number;
  addresses: readonly string[];
}

function unenforceableEgress(tier: HostTier): never {
  throw new LeaseholdError(
    "UNENFORCEABLE",
    "network egress allow-lists need kernel tier A or B (BPF connect/sendmsg hooks); this host runs tier C (Landlock + seccomp + empty network namespace) and refuses rather than run with open or no network",
    { tier: "guest", details: { field: "network", host_tier: tier } },
  );
}

function parseJobRule(text: string, i: number): EgressRule {
  const entry = parseEgressRule(text);
  if (entry === undefined) {
    throw new LeaseholdError("INVALID_ARGUMENT", `host ceiling (guest check): network.egress[${i}] '${text}' is not ${EGRESS_FORMAT}`, {
      tier: "guest",
      details: { field: `network.egress[${i}]` },
    });
  }
  return entry;
}

/**
 * The job's compiled egress list (addresses and names) against the ceiling,
 * before any name is resolved: an address rule must be covered by a ceiling
 * address rule; a name rule by the same ceiling name rule, or — decided
 * after resolution — by ceiling address rules on its port (refused here when
 * the ceiling has none on that port). Then the tier: egress on tier C is
 * UNENFORCEABLE, and no name is looked up for a job that cannot run.
 */
export function checkEgressBeforeResolution(rules: readonly string[], ceiling: HostCeiling, host: { tier: HostTier }): void {
  if (rules.length === 0) return;
  const ceilingEgress = ceiling.egress.map((t) => parseEgressRule(t) as EgressRule);
  rules.forEach((text, i) => {
    const entry = parseJobRule(text, i);
    if (egressRuleAllowedBy(entry, ceilingEgress)) return;
    if (entry.kind === "name" && ceilingEgress.some((c) => c.kind === "address" && c.port === entry.port)) return;
    beyond(`network.egress[${i}]`, `= ${text} is not covered by the host ceiling's egress list`, text, ceiling.egress);
  });
  if (host.tier === "C") unenforceableEgress(host.tier);
}

/**
 * The job's name rules as resolved, against the ceiling: a name the ceiling
 * names is allowed whatever it resolved to; any other name only when every
 * address it resolved to (/32 or /128, its port) lies inside a ceiling
 * address rule, else POLICY_REFUSED naming the address. Returns the address
 * rules ceiling NAME rules vouch for (`intersectPolicy` admits those).
 */
export function checkResolvedNames(names: readonly ResolvedName[], ceiling: HostCeiling): Set<string> {
  const ceilingEgress = ceiling.egress.map((t) => parseEgressRule(t) as EgressRule);
  const vouched = new Set<string>();
  names.forEach((resolved) => {
    const rule = parseEgressRule(resolved.rule);
    if (rule === undefined || rule.kind !== "name") throw new LeaseholdError("INVALID_ARGUMENT", `host ceiling (guest check): ${resolved.rule} is not a name rule`, { tier: "guest", details: { field: "network.egress" } });
    const named = egressRuleAllowedBy(rule, ceilingEgress);
    resolved.addresses.forEach((address) => {
      const single = hostEgressRule(address, rule.port);
      if (single === undefined) throw new LeaseholdError("INVALID_ARGUMENT", `host ceiling (guest check): ${resolved.name} resolved to ${address}, not an address`, { tier: "guest", details: { field: "network.egress" } });
      if (named) vouched.add(single.text);
      else if (!egressRuleAllowedBy(single, ceilingEgress)) {
        beyond(`network.egress`, `= ${resolved.rule} resolved to ${address}, which the host ceiling's egress list does not cover (it does not name ${resolved.rule} either)`, resolved.rule, ceiling.egress);
      }
    });
  });
  return vouched;
}

/**
 * The policy the sandbox gets: the job's own policy when every field lies
 * within the ceiling (a fresh copy), or POLICY_REFUSED naming the field; or
 * UNENFORCEABLE for egress on a tier-C host. Never a clamped policy.
 * `host.names`: the job's name rules as resolved; the policy's egress
 * then holds their /32 and /128 rules, allowed by the ceiling as the file
 * comment says. `host.guestWorkdir`: a directory the guest made itself
 * for this job outside the workspace (a bundle worker's read-only job
 * directory, daemon/bundle-run.ts) — admitted as the workdir exactly, never
 * a path below it, and never a path a job names.
 */
export function intersectPolicy(job: SandboxPolicy, ceiling: HostCeiling, host: { tier: HostTier; names?: readonly ResolvedName[]; guestWorkdir?: string }): SandboxPolicy {
  const readable = [...ceiling.exec_dirs, ...(ceiling.read_only_paths ?? [])];
  if (host.guestWorkdir === undefined || job.workdir !== host.guestWorkdir) checkPath("workdir", job.workdir, [ceiling.workspace_root]);
  job.exec_allow.forEach((d, i) => checkPath(`exec_allow[${i}]`, d, ceiling.exec_dirs));
  job.ro_binds.forEach((d, i) => checkPath(`ro_binds[${i}]`, d, readable));
  checkHostPaths(job.host_paths, ceiling);

  checkMax("memory_bytes", job.memory_bytes, ceiling.max.memory_bytes);
  checkMax("cpus", job.cpus, ceiling.max.cpus);
  checkMax("pids_max", job.pids_max, ceiling.max.pids);
  checkMax("timeout_ms", job.timeout_ms, ceiling.max.timeout_ms);
  checkMax("stdout_max_bytes", job.stdout_max_bytes, ceiling.max.output_bytes);
  checkMax("stderr_max_bytes", job.stderr_max_bytes, ceiling.max.output_bytes);
  checkMax("tmpfs_tmp_bytes", job.tmpfs_tmp_bytes, ceiling.max.tmpfs_bytes);
  checkMax("tmpfs_tmp_inodes", job.tmpfs_tmp_inodes, ceiling.max.tmpfs_inodes);

  const ll = job.landlock;
  if ((ceiling.require_landlock ?? true) && !ll.required) {
    beyond("landlock.required", "= false, but the host ceiling requires Landlock", false, true);
  }
  ll.fs.forEach((rule, i) =>
    checkPath(`landlock.fs[${i}].path`, rule.path, rule.access === "rw" ? [ceiling.workspace_root] : [...readable, ceiling.workspace_root]),
  );
  const ceilingEgress = ceiling.egress.map((t) => parseEgressRule(t) as EgressRule);
  const egressPorts = new Set(ceilingEgress.map((e) => e.port));
  ll.tcp_connect.forEach((p, i) => {
    if (!egressPorts.has(p)) beyond(`landlock.tcp_connect[${i}]`, `= ${p} is not a port in the host ceiling's egress list`, p, [...egressPorts]);
  });
  const bindPorts = ceiling.tcp_bind_ports ?? [];
  ll.tcp_bind.forEach((p, i) => {
    if (!bindPorts.includes(p)) beyond(`landlock.tcp_bind[${i}]`, `= ${p} is not in the host ceiling's tcp_bind_ports`, p, bindPorts);
  });

  if (job.network !== "none") {
    const vouched = checkResolvedNames(host.names ?? [], ceiling);
    job.network.egress.forEach((text, i) => {
      const entry = parseJobRule(text, i);
      if (entry.kind === "name") {
        throw new LeaseholdError("INVALID_ARGUMENT", `host ceiling (guest check): network.egress[${i}] '${text}' is a name; the sandbox takes resolved addresses only`, {
          tier: "guest",
          details: { field: `network.egress[${i}]` },
        });
      }
      if (!egressRuleAllowedBy(entry, ceilingEgress) && !vouched.has(entry.text)) {
        beyond(`network.egress[${i}]`, `= ${text} is not covered by the host ceiling's egress list`, text, ceiling.egress);
      }
    });
    if (host.tier === "C") unenforceableEgress(host.tier);
  }
  return structuredClone(job);
}
