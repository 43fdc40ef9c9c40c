/**
 * Leases an admin can see and break: `leasehold lease list` shows
 * the holder's name to the admin; `leasehold lease break ID --as ADMIN` ends
 * the lease, sealed as lease/1 revoked under that admin; the holder's next
 * call no longer runs under it. Another token that meets the lease gets
 * HOST_BUSY with when it ends and an opaque holder id — never the token name.
 */
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { submitAction } from "../../server/actions";
import { main } from "../../server/cli/main";
import { agentTokens, leases } from "../../server/db/schema";
import { LeaseholdError } from "../../server/errors";
import { createGrant } from "../../server/policy/grants";
import { hashActor } from "../../server/ledger/entry";
import { describeEachDatabase } from "../support/databases";
import { allEntries, insertAdmin, insertHost, insertToken, testDeps, captureCli } from "./support";

async function failure(promise: Promise<unknown>): Promise<LeaseholdError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof LeaseholdError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describeEachDatabase("leasehold lease list|break and HOST_BUSY", (db) => {
  const cli = () => captureCli(db().handle);

  it("HOST_BUSY names when the lease ends and an opaque holder id, not the token; an admin lists it by name, breaks it (sealed), and the holder's next call no longer holds the host", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await insertHost(d);
    const admin = await insertAdmin(d);
    await createGrant(d, admin, { tool: "run_command", host: host.name, maxRisk: "low", uses: 10, expiresAt: new Date(Date.now() + 60_000), pattern: "touch [a-z]" });
    const holder = await insertToken(d);
    const other = await insertToken(d);
    const [holderRow] = await d.select({ name: agentTokens.name }).from(agentTokens).where(eq(agentTokens.id, holder.tokenId));
    const touch = (caller: typeof holder, name: string) => submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: `touch ${name}` }, channel: "mcp" }, { waitMs: 0 });
    expect((await touch(holder, "a")).decision).toBe("grant");
    const [lease] = await d.select().from(leases).where(eq(leases.hostId, host.id));
    if (lease === undefined) throw new Error("no lease");

    const busy = await failure(touch(other, "b"));
    expect(busy.code).toBe("HOST_BUSY");
    const details = busy.details ?? {};
    expect(details["holder_id"]).toMatch(/^holder_[0-9a-f]{16}$/);
    expect(Date.parse(String(details["expires_at"]))).toBe(lease.expiresAt.getTime());
    const told = JSON.stringify(busy.toPayload());
    expect(told).not.toContain(String(holderRow?.name));
    expect(told).not.toContain(holder.tokenId);
    expect(told).not.toContain("test token");

    const list = cli();
    expect(await main(["lease", "list"], list.ctx)).toBe(0);
    const line = list.out.find((l) => l.startsWith(lease.id));
    expect(line).toContain(host.name);
    expect(line).toContain("exclusive");
    expect(line).toContain(String(details["holder_id"]));
    expect(line).toContain("test token"); // the admin sees the holder's description

    const refused = cli();
    expect(await main(["lease", "break", lease.id], refused.ctx)).toBe(2); // --as is required
    expect(await main(["lease", "break", lease.id, "--as", "nobody-by-that-name"], refused.ctx)).toBe(1);
    const broke = cli();
    expect(await main(["lease", "break", lease.id, "--as", admin.username], broke.ctx)).toBe(0);
    expect(broke.out.join("\n")).toContain(`lease ${lease.id} (exclusive) broken by ${admin.username}`);
    expect((await d.select().from(leases).where(eq(leases.id, lease.id)))[0]?.releaseReason).toBe("revoked");
    const sealed = (await allEntries(d)).filter((e) => e.type === "lease/1" && e.data.lease_id === lease.id && e.data.event === "revoked");
    expect(sealed).toHaveLength(1);
    expect(sealed[0]?.actor).toEqual(hashActor("admin", admin.id));
    expect(await main(["lease", "break", lease.id, "--as", admin.username], cli().ctx)).toBe(1); // already broken: NOT_FOUND

    // The other token takes the host; the old holder's next call meets it.
    expect((await touch(other, "c")).decision).toBe("grant");
    expect((await failure(touch(holder, "d"))).code).toBe("HOST_BUSY");
    const after = cli();
    await main(["lease", "list"], after.ctx);
    expect(after.out.some((l) => l.startsWith(lease.id))).toBe(false);
  });
});
