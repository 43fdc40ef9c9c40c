/**
 * The hub as a user runs it: `leasehold start` in a child process, on PGlite
 * and on a real PostgreSQL server, and every bad input giving one
 * clear line, a non-zero exit and nothing changed on disk.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { verifyPassword } from "../../server/admins";
import { openPglite } from "../../server/db";
import { adminUsers } from "../../server/db/schema";
import { createScratchPostgresDatabase, testPostgresUrl } from "../support/databases";
import { fullHealth, runCli, startHub, tempDir, type RunningHub } from "../support/hub-process";
import { freePort } from "../../tools/lib/postgres.mjs";

const hubs: RunningHub[] = [];
afterAll(async () => {
  await Promise.all(hubs.map((h) => h.stop("SIGKILL")));
});

interface Health {
  status: string;
  version: string;
  uptime_s: number;
  database: { kind: string; migrations: { applied: number; known: number } };
}

/** The full health (an agent token's view; without one /api/health says only status and version). */
function health(hub: RunningHub, env: Record<string, string> = {}): Promise<Health> {
  return fullHealth<Health>(hub, env);
}

function expectOneLineFailure(r: { code: number | null; stderr: string }, ...needles: string[]) {
  expect(r.code).not.toBe(0);
  const lines = r.stderr.split("\n").filter((l) => l.trim() !== "");
  expect(lines, r.stderr).toHaveLength(1);
  for (const n of needles) expect(lines[0]).toContain(n);
}

describe("leasehold start on embedded PGlite", () => {
  it("creates the database on first start, serves health and the admin shell, stops cleanly, and restarts warm", async () => {
    const dataDir = path.join(tempDir(), "fresh", "data");
    const hub = await startHub({ LEASEHOLD_DATA_DIR: dataDir });
    hubs.push(hub);
    const h = await health(hub);
    expect(h).toMatchObject({ status: "ok", database: { kind: "pglite" } });
    // Without a credential: status and version only (no hosts, no guest-reported text).
    const anonymous = await fetch(`${hub.url}/api/health`);
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers.get("content-type")).toContain("application/json");
    expect(await anonymous.json()).toEqual({ status: "ok", version: h.version });
    expect(h.database.migrations.applied).toBe(h.database.migrations.known);
    expect(h.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(hub.output()).toContain(`admin URL:  http://localhost:${hub.port}/`);
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);

    // The admin pages live on localhost (no public URL set): asked for on 127.0.0.1, they are sent there,
    // so the admin's cookie never belongs to the host name OAuth clients' loopback callbacks use.
    const onIp = await fetch(`${hub.url}/approvals?x=1`, { redirect: "manual" });
    expect(onIp.status).toBe(308);
    expect(onIp.headers.get("location")).toBe(`http://localhost:${hub.port}/approvals?x=1`);
    // They need a signed-in admin: a visitor is sent to sign-in, and tRPC says 401.
    const page = await fetch(`http://localhost:${hub.port}/`, { redirect: "manual" });
    expect(page.status).toBe(307);
    expect(page.headers.get("location")).toMatch(/\/sign-in$/);
    const signInPage = await fetch(`${hub.url}/sign-in`);
    expect(signInPage.status).toBe(200);
    expect(await signInPage.text()).toContain("Sign in");
    const trpc = await fetch(`${hub.url}/api/trpc/health.get`);
    expect(trpc.status).toBe(401);

    // A second process on the same data directory is refused, not run beside it.
    const second = await runCli(["start"], { LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_PORT: String(await freePort()) });
    expectOneLineFailure(second, "in use by another Leasehold process", "DATA_DIR_LOCKED");
    // Other commands run inside the hub through its control socket instead.
    const migrate = await runCli(["migrate"], { LEASEHOLD_DATA_DIR: dataDir });
    expect(migrate.code, migrate.stderr).toBe(0);
    expect(migrate.stdout).toMatch(/migrations: (\d+)\/\1 applied \(pglite/);
    expect(fs.statSync(path.join(dataDir, "control.sock")).mode & 0o777).toBe(0o600);

    // The first start prints the first admin's password and an MCP token, once each.
    const adminLine = /admin: {6}admin \/ (\S+) {2}\(shown only now/.exec(hub.output());
    expect(adminLine, hub.output()).not.toBeNull();
    expect(hub.output()).toMatch(/MCP token: {2}lh_\S+ {2}\(token "first-agent"/);

    expect(await hub.stop("SIGTERM")).toBe(0);
    expect(hub.output()).toContain("SIGTERM received, stopping");
    // The printed password is the stored admin's (scrypt hash only).
    const stored = await openPglite(path.join(dataDir, "pg"));
    try {
      const [row] = await stored.db.select().from(adminUsers).where(eq(adminUsers.username, "admin"));
      expect(row?.passwordHash).not.toContain(adminLine![1]!);
      expect(await verifyPassword(adminLine![1]!, row!.passwordHash)).toBe(true);
      expect(await verifyPassword(`${adminLine![1]!}x`, row!.passwordHash)).toBe(false);
    } finally {
      await stored.close();
    }

    const again = await startHub({ LEASEHOLD_DATA_DIR: dataDir });
    hubs.push(again);
    expect(again.output()).not.toMatch(/admin: {6}|MCP token:/);
    expect((await health(again)).database.migrations.applied).toBe(h.database.migrations.applied);
    expect(await again.stop("SIGINT")).toBe(0);
  });

  it("`leasehold migrate` applies migrations to a new data directory and exits", async () => {
    const dataDir = path.join(tempDir(), "data");
    const r = await runCli(["migrate"], { LEASEHOLD_DATA_DIR: dataDir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/migrations: (\d+)\/\1 applied \(pglite/);
  });
});

describe("leasehold start on a real PostgreSQL server", () => {
  it("runs the same hub with DATABASE_URL", async () => {
    if (!testPostgresUrl()) throw new Error("TEST_POSTGRES_URL is not set: run `npm test`");
    const scratch = await createScratchPostgresDatabase();
    try {
      const hub = await startHub({ DATABASE_URL: scratch.url });
      hubs.push(hub);
      const h = await health(hub, { DATABASE_URL: scratch.url });
      expect(h).toMatchObject({ status: "ok", database: { kind: "postgres" } });
      expect(h.database.migrations.applied).toBe(h.database.migrations.known);
      expect(hub.output()).not.toContain("\n  database:   pglite");
      expect(await hub.stop()).toBe(0);
    } finally {
      await scratch.drop();
    }
  });
});

describe("bad input: one clear line, non-zero exit, nothing changed on disk", () => {
  const cases: Array<[string, Record<string, string>, string[]]> = [
    ["an unknown variable", { LEASEHOLD_PROT: "9000" }, ["LEASEHOLD_PROT is not a Leasehold setting"]],
    ["a malformed port", { LEASEHOLD_PORT: "eighty" }, ["LEASEHOLD_PORT must be a whole number"]],
    ["a malformed DATABASE_URL", { DATABASE_URL: "mysql://x/y" }, ["DATABASE_URL must be a postgres://"]],
    ["an unreachable DATABASE_URL", { DATABASE_URL: "postgres://u:secret@127.0.0.1:1/db" }, ["cannot reach DATABASE_URL", "connection refused"]],
    ["a host that is not ours", { LEASEHOLD_HOST: "192.0.2.1" }, ["LEASEHOLD_HOST 192.0.2.1 is not an address of this machine"]],
  ];
  it.each(cases)("%s", async (_name, env, needles) => {
    const dataDir = path.join(tempDir(), "never-created");
    const r = await runCli(["start"], { LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_PORT: String(await freePort()), ...env });
    expectOneLineFailure(r, ...needles);
    expect(r.stderr).not.toContain("secret");
    expect(fs.existsSync(dataDir)).toBe(false);
  });

  it("a port in use", async () => {
    const blocker = net.createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => blocker.listen(port, "127.0.0.1", resolve));
    try {
      const dataDir = path.join(tempDir(), "never-created");
      const r = await runCli(["start"], { LEASEHOLD_DATA_DIR: dataDir, LEASEHOLD_PORT: String(port) });
      expectOneLineFailure(r, `LEASEHOLD_PORT ${port} is already in use`);
      expect(fs.existsSync(dataDir)).toBe(false);
    } finally {
      blocker.close();
    }
  });

  it("a data directory that is not a directory or cannot be written", async () => {
    const file = path.join(tempDir(), "a-file");
    fs.writeFileSync(file, "x");
    const r1 = await runCli(["start"], { LEASEHOLD_DATA_DIR: path.join(file, "data"), LEASEHOLD_PORT: String(await freePort()) });
    expectOneLineFailure(r1, "LEASEHOLD_DATA_DIR", "is not usable");
    const r2 = await runCli(["start"], { LEASEHOLD_DATA_DIR: file, LEASEHOLD_PORT: String(await freePort()) });
    expectOneLineFailure(r2, "exists and is not a directory");
    // /proc is not writable even for root.
    const r3 = await runCli(["start"], { LEASEHOLD_DATA_DIR: "/proc/leasehold-data", LEASEHOLD_PORT: String(await freePort()) });
    expectOneLineFailure(r3, "LEASEHOLD_DATA_DIR /proc/leasehold-data is not usable");
    expect(fs.readFileSync(file, "utf8")).toBe("x");
  });

  it("a data directory on a read-only mount", async () => {
    if (process.getuid?.() !== 0) throw new Error("this test mounts a read-only tmpfs and must run as root (npm test does)");
    const mountPoint = tempDir("lh-ro-");
    execFileSync("mount", ["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", mountPoint]);
    try {
      const r = await runCli(["start"], { LEASEHOLD_DATA_DIR: path.join(mountPoint, "data"), LEASEHOLD_PORT: String(await freePort()) });
      expectOneLineFailure(r, "is not usable", mountPoint);
    } finally {
      execFileSync("umount", [mountPoint]);
    }
  });
});

describe("the CLI", () => {
  it("--help lists every subcommand with one line each", async () => {
    const r = await runCli(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}start {2,}\S.*$/m);
    expect(r.stdout).toMatch(/^ {2}migrate {2,}\S.*$/m);
  });

  it("an unknown subcommand is a usage error", async () => {
    const r = await runCli(["frobnicate"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown command "frobnicate"');
  });

  it("honours the same LEASEHOLD_* variables as the hub (bad value → same refusal)", async () => {
    const r = await runCli(["migrate"], { LEASEHOLD_DATA_DIR: "" });
    expectOneLineFailure(r, "LEASEHOLD_DATA_DIR must not be empty");
  });
});
