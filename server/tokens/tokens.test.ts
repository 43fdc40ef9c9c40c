import { describe, expect, it } from "vitest";
import { describeEachDatabase } from "../../test/support/databases";
import { sql } from "drizzle-orm";
import { executeRows } from "../db";
import { decodeEntry } from "../ledger/entry";
import { authenticateToken, createToken, generateTokenSecret, hashTokenSecret, listTokens, looksLikeToken, parseExpiry, revokeToken } from "./index";

const KNOWN = ["health", "hosts_list", "run_command"];

describe("token secrets and expiry", () => {
  it("issues lh_ + 192 random bits, base64url", () => {
    const a = generateTokenSecret();
    expect(a).toMatch(/^lh_[A-Za-z0-9_-]{32}$/);
    expect(Buffer.from(a.slice(3), "base64url").length * 8).toBeGreaterThanOrEqual(160);
    expect(generateTokenSecret()).not.toBe(a);
    expect(looksLikeToken(a)).toBe(true);
    expect(hashTokenSecret(a)).toHaveLength(32);
  });
  it("requires --expires, and `never` only when said", () => {
    const now = new Date("2026-01-01T00:00:00Z");
    expect(parseExpiry(undefined, now).ok).toBe(false);
    expect(parseExpiry("never", now)).toEqual({ ok: true, expiresAt: null });
    expect(parseExpiry("30d", now)).toEqual({ ok: true, expiresAt: new Date("2026-01-31T00:00:00Z") });
    expect(parseExpiry("90m", now)).toEqual({ ok: true, expiresAt: new Date("2026-01-01T01:30:00Z") });
    for (const bad of ["", "0d", "30", "d", "1y", "-1d", "1.5h", "99999999d"]) expect(parseExpiry(bad, now).ok).toBe(false);
  });
});

describeEachDatabase("agent tokens", (db) => {
  it("stores only the hash, seals issue and revocation in the ledger first, and refuses after revocation", async () => {
    const { handle } = db();
    const before = await executeRows<{ n: string | number }>(handle.db, sql`select count(*) as n from ledger_entries`);
    const { token, secret } = await createToken(handle.db, { name: "ci bot", readOnly: true, tools: ["health"], hosts: ["web-1"], expiresAt: null, createdBy: "cli" }, { knownTools: KNOWN });
    const rows = await executeRows<{ token_hash: Uint8Array }>(handle.db, sql`select token_hash from agent_tokens where id = ${token.id}`);
    expect(Buffer.from(rows[0]!.token_hash).toString("hex")).toBe(Buffer.from(hashTokenSecret(secret)).toString("hex"));
    const dump = JSON.stringify(await executeRows(handle.db, sql`select * from agent_tokens`));
    expect(dump).not.toContain(secret.slice(3));
    expect(await authenticateToken(handle.db, secret)).toMatchObject({ ok: true, token: { id: token.id, readOnly: true, tools: ["health"], hosts: ["web-1"] } });
    expect(await authenticateToken(handle.db, generateTokenSecret())).toEqual({ ok: false, reason: "unknown" });
    expect(await authenticateToken(handle.db, "lh_short")).toEqual({ ok: false, reason: "malformed" });

    expect(await revokeToken(handle.db, token.id, "cli")).toMatchObject({ alreadyRevoked: false });
    expect(await authenticateToken(handle.db, secret)).toEqual({ ok: false, reason: "revoked" });
    expect(await revokeToken(handle.db, token.id, "cli")).toMatchObject({ alreadyRevoked: true });

    const entries = await executeRows<{ body: Uint8Array }>(handle.db, sql`select body from ledger_entries order by id desc limit 2`);
    const decoded = entries.map((e) => decodeEntry(new Uint8Array(e.body)));
    expect(decoded.map((d) => d.ok && d.entry.type === "token/1" && d.entry.data.event)).toEqual(["revoked", "issued"]);
    const after = await executeRows<{ n: string | number }>(handle.db, sql`select count(*) as n from ledger_entries`);
    expect(Number(after[0]!.n) - Number(before[0]!.n)).toBe(2);
    expect((await listTokens(handle.db)).some((t) => t.id === token.id && t.revokedAt !== null)).toBe(true);
  });

  it("observe any: issued and read back, sealed in token/1 and its scope digest; judged by default; read-only + observe any refused (no row, no entry); the column refuses it too", async () => {
    const { handle } = db();
    const judged = await createToken(handle.db, { name: "judged", readOnly: false, tools: null, hosts: null, expiresAt: null, createdBy: "cli" }, { knownTools: KNOWN });
    const any = await createToken(handle.db, { name: "sandbox first", readOnly: false, observe: "any", tools: null, hosts: null, expiresAt: null, createdBy: "cli" }, { knownTools: KNOWN });
    expect(judged.token.observe).toBe("judged");
    expect(await authenticateToken(handle.db, any.secret)).toMatchObject({ ok: true, token: { observe: "any", readOnly: false } });
    const issued = async (id: string) => {
      const rows = await executeRows<{ body: Uint8Array }>(handle.db, sql`select body from ledger_entries order by id`);
      const found = rows.map((r) => decodeEntry(new Uint8Array(r.body))).find((d) => d.ok && d.entry.type === "token/1" && d.entry.data.token_id === id);
      return found?.ok && found.entry.type === "token/1" ? found.entry.data : undefined;
    };
    expect(await issued(any.token.id)).toMatchObject({ observe: "any", read_only: false });
    expect(await issued(judged.token.id)).not.toHaveProperty("observe");
    expect((await issued(any.token.id))?.scope_digest).not.toBe((await issued(judged.token.id))?.scope_digest);

    const before = await executeRows<{ n: string | number }>(handle.db, sql`select count(*) as n from ledger_entries`);
    await expect(createToken(handle.db, { name: "contradiction", readOnly: true, observe: "any", tools: null, hosts: null, expiresAt: null, createdBy: "cli" }, { knownTools: KNOWN })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringContaining("read-only token cannot have observe scope any") as unknown as string,
    });
    await expect(createToken(handle.db, { name: "odd", readOnly: false, observe: "all" as "any", tools: null, hosts: null, expiresAt: null, createdBy: "cli" }, { knownTools: KNOWN })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    const after = await executeRows<{ n: string | number }>(handle.db, sql`select count(*) as n from ledger_entries`);
    expect(Number(after[0]!.n)).toBe(Number(before[0]!.n));
    expect((await listTokens(handle.db)).some((t) => t.name === "contradiction" || t.name === "odd")).toBe(false);
    // Defence in depth: the table itself refuses the contradiction and unknown values.
    await expect(handle.db.execute(sql`update agent_tokens set read_only = true where id = ${any.token.id}`)).rejects.toThrow();
    await expect(handle.db.execute(sql`update agent_tokens set observe = 'all' where id = ${judged.token.id}`)).rejects.toThrow();
  });

  it("refuses an expired token, unknown tools, bad names, and revoking what does not exist", async () => {
    const { handle } = db();
    const now = new Date();
    const { secret } = await createToken(handle.db, { name: "short", readOnly: false, tools: null, hosts: null, expiresAt: new Date(now.getTime() + 1000), createdBy: "cli" }, { knownTools: KNOWN, now });
    expect(await authenticateToken(handle.db, secret, new Date(now.getTime() + 2000))).toEqual({ ok: false, reason: "expired" });
    await expect(createToken(handle.db, { name: "x", readOnly: false, tools: ["run_comand"], hosts: null, expiresAt: null, createdBy: "cli" }, { knownTools: KNOWN })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(createToken(handle.db, { name: "", readOnly: false, tools: null, hosts: null, expiresAt: null, createdBy: "cli" }, { knownTools: KNOWN })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(revokeToken(handle.db, "00000000-0000-4000-8000-000000000000", "cli")).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(revokeToken(handle.db, "nope", "cli")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
