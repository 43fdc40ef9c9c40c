/**
 * A network namespace the test makes for itself, joined to the root
 * namespace by a veth pair: the only non-loopback addresses a test may use.
 * Built with iproute2 (`ip`); processes are put into it with
 * `nsenter --net=` alone — `ip netns exec` would also remount /sys and hide
 * the /sys/fs/cgroup the sandbox needs.
 *
 * Missing tools or privileges throw: a test that needs a second "machine"
 * must fail loudly, never pass by quietly running over loopback.
 */
import { execFile, spawnSync } from "node:child_process";
import { randomBytes, randomInt } from "node:crypto";
import fs from "node:fs";
import { ROOT, childEnv } from "./hub-process";

export interface TestNetns {
  /** `lh-t-<hex>`, as listed by `ip netns list`. */
  name: string;
  /** The bind-mounted namespace file, for `nsenter --net=`. */
  path: string;
  /** The veth end left in the root namespace, and its address. */
  rootDev: string;
  rootAddress: string;
  /** The veth end moved into the namespace, and its address. */
  nsDev: string;
  nsAddress: string;
  /** `nsenter --net=<path> -- ...argv`: runs argv in this namespace only. */
  wrap(argv: readonly string[]): string[];
  /** Bytes received on the root-side veth end: traffic that really came out of the namespace. */
  rootRxBytes(): number;
  /** Deletes the veth pair and the namespace; safe to call twice. */
  remove(): void;
}

/** Throws, naming the Debian package to install, when a command the fixture needs is missing. */
function requireTool(name: string, pkg: string): void {
  const r = spawnSync(name, ["--version"], { stdio: "ignore" });
  if (r.error !== undefined && (r.error as NodeJS.ErrnoException).code === "ENOENT") {
    throw new Error(`\`${name}\` is not installed (Debian package ${pkg}); \`npm test\` installs it, or run: apt-get install -y ${pkg}`);
  }
}

function ip(args: string[]): string {
  const r = spawnSync("ip", args, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`ip ${args.join(" ")} failed: ${(r.stderr || r.error?.message || "").trim()}`);
  return r.stdout;
}

function ipv4ToInt(address: string): number {
  return address.split(".").reduce((n, part) => n * 256 + Number(part), 0);
}

function intToIpv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

/** Every IPv4 range this machine already routes or holds (any table), so a chosen /30 does not shadow a real network. */
function rangesInUse(): Array<{ start: number; end: number }> {
  const ranges: Array<{ start: number; end: number }> = [];
  const add = (dst: string) => {
    const [addr, bits] = dst.split("/");
    if (addr === undefined || !/^\d+\.\d+\.\d+\.\d+$/.test(addr)) return;
    const prefix = bits === undefined ? 32 : Number(bits);
    const size = 2 ** (32 - prefix);
    const start = Math.floor(ipv4ToInt(addr) / size) * size;
    ranges.push({ start, end: start + size - 1 });
  };
  for (const route of JSON.parse(ip(["-j", "-4", "route", "show", "table", "all"])) as Array<{ dst?: string }>) {
    if (route.dst !== undefined && route.dst !== "default") add(route.dst);
  }
  for (const link of JSON.parse(ip(["-j", "-4", "addr"])) as Array<{ addr_info?: Array<{ local?: string; prefixlen?: number }> }>) {
    for (const a of link.addr_info ?? []) if (a.local !== undefined) add(`${a.local}/${a.prefixlen ?? 32}`);
  }
  return ranges;
}

/** A random /30 in 10/8 or 169.254/16 (not 169.254.0/24, .169/24 — cloud metadata — or .255/24). */
function randomSubnet(): number {
  if (randomInt(2) === 0) return ipv4ToInt(`10.${randomInt(256)}.${randomInt(256)}.0`) + randomInt(64) * 4;
  let third: number;
  do third = randomInt(1, 255);
  while (third === 169);
  return ipv4ToInt(`169.254.${third}.0`) + randomInt(64) * 4;
}

const live = new Set<TestNetns>();
let exitHookInstalled = false;

/**
 * Creates the namespace and the veth pair, addresses both ends from a random
 * free /30 and brings them (and the namespace's `lo`) up. Retries with a new
 * name and subnet when another run got there first.
 */
export function createTestNetns(): TestNetns {
  requireTool("ip", "iproute2");
  requireTool("nsenter", "util-linux");
  if (typeof process.getuid === "function" && process.getuid() !== 0) {
    throw new Error("creating a network namespace and a veth pair needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN); run the suite as root");
  }
  if (!exitHookInstalled) {
    // afterAll may never run if the worker is torn down; the kernel objects would outlive it.
    process.on("exit", () => {
      for (const ns of live) ns.remove();
    });
    exitHookInstalled = true;
  }
  let lastError: unknown;
  for (let attempt = 0; attempt < 8; attempt += 1) {
    const tag = randomBytes(3).toString("hex");
    const name = `lh-t-${tag}`;
    const rootDev = `lht${tag}r`;
    const nsDev = `lht${tag}n`;
    const used = rangesInUse();
    const base = randomSubnet();
    if (used.some((r) => r.start <= base + 3 && base <= r.end)) continue;
    const rootAddress = intToIpv4(base + 1);
    const nsAddress = intToIpv4(base + 2);
    const nsPath = `/run/netns/${name}`;
    const netns: TestNetns = {
      name,
      path: nsPath,
      rootDev,
      rootAddress,
      nsDev,
      nsAddress,
      wrap: (argv) => ["nsenter", `--net=${nsPath}`, "--", ...argv],
      rootRxBytes: () => Number(fs.readFileSync(`/sys/class/net/${rootDev}/statistics/rx_bytes`, "utf8").trim()),
      remove() {
        // Deleting one veth end deletes both; `ip netns del` alone leaves the pair until the kernel reaps the namespace.
        spawnSync("ip", ["link", "del", rootDev], { stdio: "ignore" });
        spawnSync("ip", ["netns", "del", name], { stdio: "ignore" });
        live.delete(netns);
      },
    };
    try {
      ip(["netns", "add", name]);
    } catch (error) {
      lastError = error;
      continue; // the name exists: another run's namespace, never ours to touch
    }
    live.add(netns);
    try {
      ip(["link", "add", rootDev, "type", "veth", "peer", "name", nsDev, "netns", name]);
      // No IPv6 link-local addresses: the veth's byte counters then carry only the test's own traffic.
      ip(["link", "set", rootDev, "addrgenmode", "none"]);
      ip(["-n", name, "link", "set", nsDev, "addrgenmode", "none"]);
      ip(["addr", "add", `${rootAddress}/30`, "dev", rootDev]);
      ip(["-n", name, "addr", "add", `${nsAddress}/30`, "dev", nsDev]);
      ip(["link", "set", rootDev, "up"]);
      ip(["-n", name, "link", "set", nsDev, "up"]);
      ip(["-n", name, "link", "set", "lo", "up"]);
      // A concurrent run may have picked the same /30 between our check and our add: then neither may use it.
      const routes = JSON.parse(ip(["-j", "-4", "route", "show", "table", "all", "match", rootAddress])) as Array<{ dst?: string; dev?: string; type?: string }>;
      const rivals = routes.filter((r) => r.dst !== "default" && r.dev !== rootDev && r.dev !== "lo");
      if (rivals.length > 0) throw new Error(`${rootAddress}/30 is also routed via ${rivals.map((r) => r.dev).join(", ")}`);
      return netns;
    } catch (error) {
      netns.remove();
      lastError = error;
    }
  }
  throw new Error(`could not create a test network namespace: ${lastError instanceof Error ? lastError.message : String(lastError)}`);
}

/** Runs a Node script inside the namespace; resolves with its exit code and output. */
export function nodeInNetns(netns: TestNetns, script: string, timeoutMs = 15_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [cmd, ...args] = netns.wrap([process.execPath, "--input-type=module", "-e", script]);
  return new Promise((resolve) => {
    execFile(cmd!, args, { cwd: ROOT, timeout: timeoutMs, env: childEnv({}) as NodeJS.ProcessEnv }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
      resolve({ code, stdout, stderr });
    });
  });
}

/** The inode of a process's network namespace: equal inodes mean the same namespace. */
export function netnsInode(pidOrPath: number | string): number {
  return fs.statSync(typeof pidOrPath === "number" ? `/proc/${pidOrPath}/ns/net` : pidOrPath).ino;
}
