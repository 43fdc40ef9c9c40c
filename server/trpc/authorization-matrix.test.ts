/**
 * The authorization matrix: every tRPC procedure, called signed out, with
 * each role, and with a session that must still change its password. The
 * procedure list is read from the router itself, so a new procedure is in
 * the matrix the moment it exists — and one without a role declaration fails.
 */
import fs from "node:fs";
import path from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_ROLES, SESSION_BINDING_HEADER, createAdminSession, type AdminRole } from "../admins";
import { applyMigrations, openPglite, type DatabaseHandle } from "../db";
import { adminSessions, adminUsers } from "../db/schema";
import type { HubRuntime } from "../hub/runtime";
import { TRPCError } from "./init";
import type { ProcedureMeta } from "./init";
import { appRouter } from "./root";
import { sessionHeaders } from "./routers/test-callers";

/** Procedures that must work signed out. Anything else public is a hole. */
const PUBLIC = ["auth.me", "auth.signIn", "passkeys.signIn", "passkeys.signInOptions"];

interface Procedure {
  path: string;
  type: string;
  meta: ProcedureMeta | undefined;
}

const procedures: Procedure[] = Object.entries(appRouter._def.procedures as unknown as Record<string, { _def: { type: string; meta?: ProcedureMeta } }>).map(([path, p]) => ({
  path,
  type: p._def.type,
  meta: p._def.meta,
}));

let handle: DatabaseHandle;
let runtime: HubRuntime;
/**
 * The re-authentication column's source of truth for people: the README's
 * table (heading "Re-authentication"), one row per procedure with why. The
 * matrix checks the table lists exactly the procedures that declare
 * `reauth`, so the docs cannot drift from the code.
 */
function readmeReauthTable(): Map<string, string> {
  const readme = fs.readFileSync(path.join(import.meta.dirname, "..", "..", "README.md"), "utf8");
  const start = readme.indexOf("### Re-authentication");
  if (start < 0) throw new Error("README.md has no \"### Re-authentication\" section");
  const section = readme.slice(start, readme.indexOf("\n#", start + 5) < 0 ? undefined : readme.indexOf("\n#", start + 5));
  const rows = new Map<string, string>();
  for (const match of section.matchAll(/^\| `([a-zA-Z.]+)` \| ([^|]+) \|$/gm)) rows.set(match[1] as string, (match[2] as string).trim());
  return rows;
}

async function sessionFor(role: AdminRole, mustChangePassword: boolean, options: { stale?: boolean } = {}): Promise<Headers> {
  const [row] = await handle.db
    .insert(adminUsers)
    .values({ username: `matrix-${role}-${mustChangePassword ? "new" : "set"}-${Math.random().toString(36).slice(2, 8)}`, passwordHash: "unused", role, mustChangePassword })
    .returning();
  if (row === undefined) throw new Error("no admin row");
  const session = await createAdminSession(handle.db, row.id);
  // Past the re-authentication window: the sign-in's own proof is an hour old.
  if (options.stale === true) await handle.db.update(adminSessions).set({ reauthenticatedAt: new Date(Date.now() - 3600_000) }).where(eq(adminSessions.id, session.sessionId));
  return sessionHeaders(session, runtime.config);
}

async function call(path: string, headers: Headers | undefined): Promise<TRPCError | undefined> {
  const caller = appRouter.createCaller({ runtime, headers: headers ?? new Headers() }) as unknown as Record<string, unknown>;
  let target: unknown = caller;
  for (const part of path.split(".")) target = (target as Record<string, unknown>)[part];
  try {
    await (target as (input: unknown) => Promise<unknown>)(undefined);
    return undefined;
  } catch (error) {
    if (error instanceof TRPCError) return error;
    throw error;
  }
}

/** The refusals the role gate itself produces (business rules may also say FORBIDDEN, with other words). */
function isRoleRefusal(error: TRPCError | undefined): boolean {
  return error?.code === "FORBIDDEN" && /may not do this|declares no role|one-time password/.test(error.message);
}

beforeAll(async () => {
  handle = await openPglite(undefined);
  await applyMigrations(handle);
  runtime = { database: { handle }, config: { publicUrl: "http://localhost:8700", dataDir: "/nonexistent" } } as unknown as HubRuntime;
});

afterAll(async () => {
  await handle.close();
});

describe("authorization matrix over every tRPC procedure", () => {
  it("lists the procedures (the matrix is not empty) and every one declares its roles", () => {
    expect(procedures.length).toBeGreaterThan(10);
    for (const p of procedures) {
      expect(p.meta?.roles, p.path).toBeDefined();
      expect(p.meta?.roles === "public" || (Array.isArray(p.meta?.roles) && p.meta.roles.length > 0), p.path).toBe(true);
    }
    expect(procedures.filter((p) => p.meta?.roles === "public").map((p) => p.path).sort()).toEqual(PUBLIC);
  });

  it("auditors are read-only (no mutation but their own sign-out, password and re-authentication), and users are the owner's alone", () => {
    const auditorMutations = procedures.filter((p) => p.type === "mutation" && Array.isArray(p.meta?.roles) && p.meta.roles.includes("auditor")).map((p) => p.path);
    expect(auditorMutations.filter((path) => !path.startsWith("auth.") && !path.startsWith("passkeys."))).toEqual([]);
    expect(procedures.filter((p) => p.path.startsWith("users.") && JSON.stringify(p.meta?.roles) !== JSON.stringify(["owner"])).map((p) => p.path)).toEqual([]);
  });

  it.each(procedures.filter((p) => p.meta?.roles !== "public").map((p) => [p.path]))("%s: signed out → UNAUTHORIZED", async (path) => {
    expect((await call(path, undefined))?.code).toBe("UNAUTHORIZED");
    expect((await call(path, new Headers({ cookie: "__Host-leasehold_session=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" })))?.code).toBe("UNAUTHORIZED");
  });

  it.each(procedures.filter((p) => p.meta?.roles !== "public").map((p) => [p.path]))("%s: an owner's live cookie without its binding secret, or with another session's → UNAUTHORIZED naming the binding", async (path) => {
    const owner = await sessionFor("owner", false);
    const bare = new Headers({ cookie: owner.get("cookie")! });
    const bareError = await call(path, bare);
    expect(bareError?.code).toBe("UNAUTHORIZED");
    expect(bareError?.message).toContain("without its binding secret");
    const other = await sessionFor("owner", false);
    const crossed = new Headers({ cookie: owner.get("cookie")!, [SESSION_BINDING_HEADER]: other.get(SESSION_BINDING_HEADER)! });
    const crossedError = await call(path, crossed);
    expect(crossedError?.code).toBe("UNAUTHORIZED");
    expect(crossedError?.message).toContain("not this session's");
  });

  const cells = procedures.filter((p) => p.meta?.roles !== "public").flatMap((p) => ADMIN_ROLES.map((role) => [p.path, role, (p.meta?.roles as readonly AdminRole[]).includes(role)] as const));
  it.each(cells)("%s as %s: allowed=%s", async (path, role, allowed) => {
    // A fresh session per call: some procedures (sign-out) end the session they run in.
    const error = await call(path, await sessionFor(role, false));
    if (allowed) {
      expect(error?.code).not.toBe("UNAUTHORIZED");
      expect(isRoleRefusal(error), `${path} refused ${role}: ${error?.message}`).toBe(false);
    } else {
      expect(error?.code).toBe("FORBIDDEN");
      expect(isRoleRefusal(error)).toBe(true);
    }
  });

  it("the re-authentication column: README.md's table lists exactly the procedures that need a fresh proof, each with why", () => {
    const table = readmeReauthTable();
    expect([...table.keys()].sort()).toEqual(procedures.filter((p) => p.meta?.reauth === true).map((p) => p.path).sort());
    for (const [procedure, why] of table) expect(why.length, procedure).toBeGreaterThan(10);
  });

  const reauthCells = procedures.filter((p) => Array.isArray(p.meta?.roles) && p.meta.roles.length > 0).map((p) => [p.path, p.meta?.reauth === true, (p.meta?.roles as readonly AdminRole[])[0] as AdminRole] as const);
  it.each(reauthCells)("%s needs re-authentication=%s (as %s past the 5-minute window)", async (path, needed, role) => {
    const error = await call(path, await sessionFor(role, false, { stale: true }));
    const refusedForReauth = error?.code === "FORBIDDEN" && (error.cause as { hint?: string } | undefined)?.hint === "reauthenticate";
    expect(refusedForReauth, `${path}: ${error?.message}`).toBe(needed);
    if (needed) {
      // And a fresh proof passes the gate (what follows may still refuse the empty input).
      const fresh = await call(path, await sessionFor(role, false));
      expect((fresh?.cause as { hint?: string } | undefined)?.hint).not.toBe("reauthenticate");
    }
  });

  it.each(procedures.filter((p) => p.meta?.roles !== "public").map((p) => [p.path, p.meta?.duringPasswordChange === true] as const))(
    "%s with a one-time password not yet replaced: allowed=%s",
    async (path, allowed) => {
      const error = await call(path, await sessionFor("owner", true));
      expect(isRoleRefusal(error) && /one-time password/.test(error?.message ?? "")).toBe(!allowed);
    },
  );
});
