// A throwaway PostgreSQL server for the test suite: initdb into a temporary
// directory as the `postgres` user (initdb refuses root), start it on a free
// loopback port with durable settings, stop and delete it afterwards.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { ensureDebianPackages } from "./apt.mjs";

function findBinDir() {
  const base = "/usr/lib/postgresql";
  if (!fs.existsSync(base)) return undefined;
  const versions = fs
    .readdirSync(base)
    .filter((v) => fs.existsSync(path.join(base, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(base, versions[0], "bin") : undefined;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function asPostgres(args, opts = {}) {
  const isRoot = process.getuid?.() === 0;
  const [cmd, ...rest] = isRoot ? ["runuser", "-u", "postgres", "--", ...args] : args;
  return execFileSync(cmd, rest, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8", ...opts });
}

/**
 * Starts a server; returns { url, binDir, dir, stop() }. `settings` go into
 * postgresql.conf (not -c flags) so a test can still change them with
 * ALTER SYSTEM + pg_reload_conf().
 */
export async function startTemporaryPostgres(settings = {}) {
  let binDir = findBinDir();
  if (!binDir) {
    ensureDebianPackages(["postgresql"]);
    binDir = findBinDir();
  }
  if (!binDir) throw new Error("PostgreSQL server binaries not found under /usr/lib/postgresql after installing postgresql");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "leasehold-pg-"));
  fs.chmodSync(dir, 0o755);
  const data = path.join(dir, "data");
  if (process.getuid?.() === 0) execFileSync("chown", ["postgres:postgres", dir]);
  asPostgres([path.join(binDir, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C"]);
  const port = await freePort();
  const conf = { listen_addresses: "'127.0.0.1'", max_connections: "200", fsync: "on", full_page_writes: "on", synchronous_commit: "on", ...settings };
  const lines = Object.entries(conf).map(([k, v]) => `${k} = ${v}`);
  fs.appendFileSync(path.join(data, "postgresql.conf"), `\n# leasehold test server\n${lines.join("\n")}\n`);
  const options = [`-p ${port}`, `-k ${dir}`].join(" ");
  asPostgres([path.join(binDir, "pg_ctl"), "-D", data, "-o", options, "-l", path.join(dir, "server.log"), "-w", "-t", "60", "start"]);
  const stop = () => {
    spawnSync(process.getuid?.() === 0 ? "runuser" : path.join(binDir, "pg_ctl"),
      process.getuid?.() === 0 ? ["-u", "postgres", "--", path.join(binDir, "pg_ctl"), "-D", data, "-m", "fast", "-w", "stop"] : ["-D", data, "-m", "fast", "-w", "stop"],
      { stdio: "ignore" });
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, binDir, dir, port, stop };
}
