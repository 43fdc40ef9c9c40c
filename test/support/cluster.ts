/**
 * A scale-out hub as an operator runs one (docs/deploy.md): a real HAProxy
 * (Debian's package; `npm test` installs it) in front of several
 * `leasehold start` processes from the built hub, each with a data
 * directory of its own, all on one scratch PostgreSQL database and, unless
 * a test asks otherwise, one shared key directory. HAProxy gets its own
 * generated config: round-robin per request (`http-server-close`), a
 * readiness check on `/api/ready`, `X-Forwarded-For`, and a retry of
 * requests a draining hub refused with 503 before doing anything.
 *
 * Reusable: `startCluster()` returns the balancer's URL, the hubs, the
 * database URL and helpers to read HAProxy's view of each server.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { freePort } from "../../tools/lib/postgres.mjs";
import { createScratchPostgresDatabase } from "./databases";
import { dyingWithParent, startHub, tempDir, type RunningHub } from "./hub-process";

export const HAPROXY_BIN = "/usr/sbin/haproxy";

/** HAProxy's readiness check period; a server is out after FALL failed checks. */
export const CHECK_INTERVAL_MS = 500;
export const CHECK_FALL = 2;

export interface ClusterOptions {
  replicas?: number;
  /** Environment for every hub (LEASEHOLD_* settings). */
  env?: Record<string, string | undefined>;
  /** Trust HAProxy's X-Forwarded-For (LEASEHOLD_TRUSTED_PROXIES=127.0.0.1/32). */
  trustProxy?: boolean;
  /** Environment of one replica only (by index), over `env`: e.g. its own route to the database. */
  replicaEnv?: (index: number, databaseUrl: string) => Record<string, string | undefined>;
  /**
   * The address HAProxy listens on and the public URL names (default
   * 127.0.0.1), e.g. the root end of a test network namespace's veth so
   * guests inside reach the hub by the one name it answers to.
   */
  publicAddress?: string;
}

export interface Cluster {
  /** The balancer's URL, also every hub's LEASEHOLD_PUBLIC_URL. */
  url: string;
  port: number;
  hubs: RunningHub[];
  databaseUrl: string;
  keyDir: string;
  /** The environment a further replica (or the CLI) needs to join this hub. */
  hubEnv(extra?: Record<string, string | undefined>): Record<string, string | undefined>;
  /** HAProxy's status of each server by name (`hub0`…): "UP", "DOWN", "UP 1/2"… */
  serverStates(): Promise<Record<string, string>>;
  /** Requests each server has taken (HAProxy's `stot`; readiness checks not counted). */
  serverCounts(): Promise<Record<string, number>>;
  haproxyOutput(): string;
  stop(): Promise<void>;
}

export function requireHaproxy(): void {
  if (!fs.existsSync(HAPROXY_BIN)) throw new Error(`${HAPROXY_BIN} is missing: run the suite with \`npm test\` (it installs Debian's haproxy) or apt-get install haproxy`);
}

/** The generated HAProxy configuration (docs/deploy.md shows the same with comments). */
export function haproxyConfig(options: { port: number; socket: string; servers: Array<{ name: string; port: number }>; address?: string }): string {
  return [
    "global",
    "  maxconn 2000",
    `  stats socket ${options.socket} mode 600 level admin`,
    "defaults",
    "  mode http",
    "  timeout connect 2s",
    "  timeout client 120s",
    "  timeout server 120s",
    // Above /api/ready's own 2 s database wait; HAProxy's default (inter) would mark busy replicas DOWN.
    "  timeout check 3s",
    // One request per connection to the hub: round-robin per request, as a session hop needs.
    "  option http-server-close",
    "  option forwardfor",
    "  option redispatch",
    "  retries 2",
    // A draining hub answers 503 (HUB_STOPPING) before doing anything: safe to send elsewhere.
    "  retry-on conn-failure empty-response 503",
    "frontend hub",
    `  bind ${options.address ?? "127.0.0.1"}:${options.port}`,
    "  default_backend hubs",
    "backend hubs",
    "  balance roundrobin",
    "  option httpchk",
    "  http-check send meth GET uri /api/ready ver HTTP/1.1 hdr host 127.0.0.1",
    "  http-check expect status 200",
    `  default-server inter ${CHECK_INTERVAL_MS} fall ${CHECK_FALL} rise 1`,
    ...options.servers.map((s) => `  server ${s.name} 127.0.0.1:${s.port} check`),
    "",
  ].join("\n");
}

async function adminCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const conn = net.connect(socket);
    let out = "";
    conn.on("connect", () => conn.end(`${command}\n`));
    conn.on("data", (d: Buffer) => (out += d.toString()));
    conn.on("end", () => resolve(out));
    conn.on("error", reject);
  });
}

async function serverStats(socket: string): Promise<Array<{ name: string; status: string; sessions: number }>> {
  const csv = await adminCommand(socket, "show stat");
  const lines = csv.split("\n").filter((l) => l.length > 0);
  const header = (lines[0] ?? "").replace(/^# /, "").split(",");
  const [px, sv, st, stot] = [header.indexOf("pxname"), header.indexOf("svname"), header.indexOf("status"), header.indexOf("stot")];
  return lines
    .slice(1)
    .map((line) => line.split(","))
    .filter((cols) => cols[px] === "hubs" && cols[sv] !== "BACKEND")
    .map((cols) => ({ name: cols[sv] ?? "", status: cols[st] ?? "", sessions: Number(cols[stot] ?? 0) }));
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  requireHaproxy();
  const replicas = options.replicas ?? 3;
  const dir = tempDir("lh-cluster-");
  const keyDir = path.join(dir, "keys");
  const scratch = await createScratchPostgresDatabase();
  const port = await freePort();
  const url = `http://${options.publicAddress ?? "127.0.0.1"}:${port}`;
  const ports: number[] = [];
  for (let i = 0; i < replicas; i++) ports.push(await freePort());
  const hubEnv = (extra: Record<string, string | undefined> = {}) => ({
    DATABASE_URL: scratch.url,
    LEASEHOLD_PUBLIC_URL: url,
    LEASEHOLD_KEY_DIR: keyDir,
    LEASEHOLD_LOCAL_GUEST: "0",
    // Every client here — HAProxy and the tests' direct requests — is 127.0.0.1, so the per-address
    // cap is raised as docs/deploy.md says to behind a proxy (above the proxy's upstream connections).
    LEASEHOLD_CONNECTIONS_PER_ADDRESS: "1024",
    ...(options.trustProxy === true ? { LEASEHOLD_TRUSTED_PROXIES: "127.0.0.1/32" } : {}),
    ...options.env,
    ...extra,
  });
  const hubs: RunningHub[] = [];
  let haproxy: ChildProcess | undefined;
  let haproxyOut = "";
  const socket = path.join(dir, "haproxy.sock");
  const stop = async () => {
    haproxy?.kill("SIGKILL");
    await Promise.all(hubs.map((h) => h.stop("SIGKILL")));
    await scratch.drop().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    // The first replica creates the keys and pins them; the others start alongside once it has.
    const own = (i: number) => options.replicaEnv?.(i, scratch.url) ?? {};
    hubs.push(await startHub(hubEnv({ LEASEHOLD_PORT: String(ports[0]), LEASEHOLD_DATA_DIR: path.join(dir, "data0"), ...own(0) })));
    hubs.push(...(await Promise.all(ports.slice(1).map((p, i) => startHub(hubEnv({ LEASEHOLD_PORT: String(p), LEASEHOLD_DATA_DIR: path.join(dir, `data${i + 1}`), ...own(i + 1) }))))));
    const config = path.join(dir, "haproxy.cfg");
    fs.writeFileSync(config, haproxyConfig({ port, socket, servers: ports.map((p, i) => ({ name: `hub${i}`, port: p })), address: options.publicAddress }));
    const check = spawnSync(HAPROXY_BIN, ["-c", "-f", config], { encoding: "utf8" });
    if (check.status !== 0) throw new Error(`haproxy refused its config:\n${check.stdout}${check.stderr}`);
    const [command, ...args] = dyingWithParent([HAPROXY_BIN, "-db", "-f", config]);
    haproxy = spawn(command!, args, { stdio: ["ignore", "pipe", "pipe"] });
    haproxy.stdout?.on("data", (d: Buffer) => (haproxyOut += d.toString()));
    haproxy.stderr?.on("data", (d: Buffer) => (haproxyOut += d.toString()));
    const cluster: Cluster = {
      url,
      port,
      hubs,
      databaseUrl: scratch.url,
      keyDir,
      hubEnv,
      serverStates: async () => Object.fromEntries((await serverStats(socket)).map((s) => [s.name, s.status])),
      serverCounts: async () => Object.fromEntries((await serverStats(socket)).map((s) => [s.name, s.sessions])),
      haproxyOutput: () => haproxyOut,
      stop,
    };
    // Ready once HAProxy has seen every hub pass its readiness check.
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (haproxy.exitCode !== null) throw new Error(`haproxy exited (${haproxy.exitCode}):\n${haproxyOut}`);
      const states = await cluster.serverStates().catch(() => ({}) as Record<string, string>);
      if (Object.keys(states).length === replicas && Object.values(states).every((s) => s === "UP")) break;
      if (Date.now() > deadline) throw new Error(`haproxy did not see every hub ready: ${JSON.stringify(states)}\n${haproxyOut}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return cluster;
  } catch (error) {
    await stop();
    throw error;
  }
}
