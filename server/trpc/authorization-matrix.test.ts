/**
 * The authorization matrix: every tRPC procedure, called signed out, with
 * each role, and with a session that must still change its password. The
 * procedure list is read from the router itself, so a new procedure is in
 * the matrix the moment it exists — and one without a role declaration fails.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_ROLES, SESSION_BINDING_HEADER, createAdminSession, type AdminRole } from "../admins";
import { applyMigrations, openPglite, type DatabaseHandle } from "../db";
import { adminUsers } from "../db/schema";
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
async function sessionFor(role: AdminRole, mustChangePassword: boolean): Promise<Headers> {
  const [row] = await handle.db
    .insert(adminUsers)
    .values({ username: `matrix-${role}-${mustChangePassword ? "new" : "set"}-${Math.random().toString(36).slice(2, 8)}`, passwordHash: "unused", role, mustChangePassword })
    .returning();
  if (row === undefined) throw new Error("no admin row");
  const session = await createAdminSession(handle.db, row.id);
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

  it.each(procedures.filter((p) => p.meta?.roles !== "public").map((p) => [p.path, p.meta?.duringPasswordChange === true] as const))(
    "%s with a one-time password not yet replaced: allowed=%s",
    async (path, allowed) => {
      const error = await call(path, await sessionFor("owner", true));
      expect(isRoleRefusal(error) && /one-time password/.test(error?.message ?? "")).toBe(!allowed);
    },
  );
});
