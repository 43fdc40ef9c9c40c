/**
 * `leasehold grant create` has no passkey: at or above the passkey threshold
 * it refuses (FORBIDDEN, naming the browser page) and creates nothing; with
 * the threshold off, whoever reaches the database is trusted.
 */
import { expect, it } from "vitest";
import { captureCli, insertAdmin, insertHost } from "../../../test/pipeline/support";
import { describeEachDatabase } from "../../../test/support/databases";
import type { HubConfig } from "../../config";
import type { CliContext } from "../context";
import { grants } from "../../db/schema";
import { main } from "../main";

describeEachDatabase("leasehold grant create and the passkey threshold", (database) => {
  function cli(config: Partial<HubConfig>) {
    const captured = captureCli(database().handle);
    const ctx: CliContext = { ...captured.ctx, withDatabase: (_purpose, fn) => fn({ config: config as HubConfig, handle: database().handle }) };
    return { ...captured, ctx };
  }
  const count = async () => (await database().handle.db.select({ id: grants.id }).from(grants)).length;

  it("hostile: a high grant from the CLI is refused FORBIDDEN naming the Grants page in the browser; medium is created; with the threshold off high is created", async () => {
    const admin = await insertAdmin(database().handle.db);
    const host = await insertHost(database().handle.db);
    const args = (risk: string) => ["grant", "create", "--tool", "run_command", "--host", host.name, "--max-risk", risk, "--uses", "1", "--expires", "1h", "--as", admin.username];
    const before = await count();
    const hub = cli({ publicUrl: "https://hub.example.org", host: "0.0.0.0", port: 8700, passkeyApprovalRisk: "high" });
    expect(await main(args("high"), hub.ctx)).toBe(1);
    const said = hub.err.join("\n");
    expect(said).toContain("FORBIDDEN");
    expect(said).toContain("needs a passkey signature over its scope");
    expect(said).toContain("https://hub.example.org/grants");
    expect(await count()).toBe(before);
    expect(await main(args("medium"), hub.ctx)).toBe(0);
    expect(await count()).toBe(before + 1);
    // No config at all counts as threshold high (fail closed).
    expect(await main(args("high"), cli({}).ctx)).toBe(1);
    const off = cli({ publicUrl: "https://hub.example.org", host: "0.0.0.0", port: 8700, passkeyApprovalRisk: "off" });
    expect(await main(args("high"), off.ctx)).toBe(0);
    expect(await count()).toBe(before + 2);
  });

  it("hostile: a pattern holding a raw U+200B or U+202E is refused INVALID_ARGUMENT naming each code point; written as escapes it is created", async () => {
    const admin = await insertAdmin(database().handle.db);
    const host = await insertHost(database().handle.db);
    const args = (pattern: string) => ["grant", "create", "--tool", "run_command", "--host", host.name, "--max-risk", "low", "--uses", "1", "--expires", "1h", "--pattern", pattern, "--as", admin.username];
    const before = await count();
    const hub = cli({ passkeyApprovalRisk: "high" });
    expect(await main(args("r\u200bm -rf x|ftm\u202eexe"), hub.ctx)).toBe(1);
    const said = hub.err.join("\n");
    expect(said).toContain("INVALID_ARGUMENT");
    expect(said).toContain("U+200B at 2, U+202E at 14");
    expect(said).not.toMatch(/[\u200b\u202e]/u);
    expect(await count()).toBe(before);
    expect(await main(args(String.raw`r\u200bm -rf x|ftm\u202eexe`), cli({ passkeyApprovalRisk: "high" }).ctx)).toBe(0);
    expect(await count()).toBe(before + 1);
  });
});
