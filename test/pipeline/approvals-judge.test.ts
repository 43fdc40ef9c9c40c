/**
 * Approvals a person can judge. `approvals list`/`show` print the
 * prepared action in full; approve/deny take the approval id or the action
 * id; one token's held actions are capped (RATE_LIMITED, sealed) and cannot
 * push another token's request out of sight.
 */
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { submitAction } from "../../server/actions";
import { listApprovals, pageApprovals } from "../../server/approvals";
import { main } from "../../server/cli/main";
import { actions, agentTokens } from "../../server/db/schema";
import { describeEachDatabase } from "../support/databases";
import { codeOf, rejectionOf } from "../support/refusals";
import { allEntries, insertAdmin, insertHost, insertToken, testDeps, captureCli } from "./support";

const GH_TOKEN = `ghp_${"Z9y8".repeat(9)}`;

describeEachDatabase("approvals a person can judge", (db) => {
  const cli = () => captureCli(db().handle);

  it("`approvals show` (by action id) prints the whole prepared action; approve and deny accept the action id", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle);
    const host = await insertHost(d, "web-1-" + Math.random().toString(16).slice(2, 6));
    const admin = await insertAdmin(d);
    const caller = await insertToken(d, { createdBy: "someone-else" });
    await d.update(agentTokens).set({ name: "ci-bot" }).where(eq(agentTokens.id, caller.tokenId));
    const request = {
      operation: "run_command",
      arguments: { host: host.name, command: "tar -xf a.tar && rm -f a.tar", cwd: "releases", env: { TAR_OPTIONS: "--checkpoint=1 --checkpoint-action=exec=sh -c 'id'", GITHUB_TOKEN: GH_TOKEN }, stdin: "a.tar\n\u001b]52;c;aGk=\u0007", timeout_s: 30 },
      channel: "mcp" as const,
    };
    const held = await rejectionOf(submitAction(deps, caller, request, { waitMs: 0 }));
    const actionId = String(held.details?.["action_id"]);
    const approvalId = String(held.details?.["approval_id"]);

    const show = cli();
    expect(await main(["approvals", "show", actionId], show.ctx)).toBe(0);
    const transcript = show.out.join("\n");
    console.log(`$ leasehold approvals show ${actionId}   [${db().kind}]\n${transcript}`);
    expect(show.out[0]).toMatch(new RegExp(`^${approvalId}  run_command on ${host.name}  risk high  pending  deadline `));
    expect(transcript).toContain(`action ${actionId}`);
    expect(transcript).toContain(`action_hash ${String(held.details?.["action_hash"] ?? "")}`.trim());
    expect(transcript).toContain(`requested by agent token "ci-bot" (${caller.tokenId}), session `);
    expect(transcript).toMatch(/│ .*⟦rm -f a\.tar⟧/);
    expect(transcript).toContain("cwd: releases");
    expect(transcript).toContain("TAR_OPTIONS=--checkpoint=1 --checkpoint-action=exec=sh -c 'id'");
    expect(transcript).not.toContain(GH_TOKEN);
    expect(transcript).toMatch(/stdin: 18 bytes, sha256 [0-9a-f]{64}/);
    expect(transcript).toContain('preview: "a.tar⟨LF⟩⟨ESC⟩]52;c;aGk=⟨BEL⟩"');
    expect(transcript).toContain("timeout: 30 s (asked 30 s)");
    expect(transcript).toMatch(/\[high\] [a-z.-]+ at 1:\d+ ⟦rm -f a\.tar⟧/);
    // The list shows the same block.
    const list = cli();
    expect(await main(["approvals", "list"], list.ctx)).toBe(0);
    expect(list.out.join("\n")).toContain(`action ${actionId}`);

    // Deciding by the action id an agent reports. This action is high-risk: with passkeys on (the
    // default threshold, high) the CLI cannot approve it — it found the approval and refuses for
    // want of a passkey signature; it stays pending.
    const approveOut = cli();
    expect(await main(["approvals", "approve", actionId, "--reason", "checked", "--as", admin.username], approveOut.ctx)).toBe(1);
    expect(approveOut.err.join("\n")).toContain("needs a passkey signature");
    expect(approveOut.err.join("\n")).not.toContain("NOT_FOUND");
    const second = await rejectionOf(submitAction(deps, caller, { ...request, arguments: { ...request.arguments, command: "rm -f b.tar" } }, { waitMs: 0 }));
    const denyOut = cli();
    expect(await main(["approvals", "deny", String(second.details?.["action_id"]), "--reason", "no", "--as", admin.username], denyOut.ctx)).toBe(0);
    expect(denyOut.out.join("\n")).toContain("denied");
    const unknown = cli();
    expect(await main(["approvals", "show", "00000000-0000-4000-8000-000000000000"], unknown.ctx)).toBe(1);
    expect(unknown.err.join("\n")).toContain("NOT_FOUND");
  });

  it("hostile: one token's held actions are capped — the next is RATE_LIMITED, sealed, nothing held; another token can still ask", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle, { maxHeldPerToken: 3 });
    const host = await insertHost(d);
    const flood = await insertToken(d);
    const other = await insertToken(d);
    const hold = (caller: typeof flood, i: number) => submitAction(deps, caller, { operation: "run_command", arguments: { host: host.name, command: `touch f${i}` }, channel: "mcp" }, { waitMs: 0 });
    for (let i = 0; i < 3; i += 1) expect(await codeOf(hold(flood, i))).toBe("APPROVAL_PENDING");
    const actionsBefore = (await d.select().from(actions).where(eq(actions.tokenId, flood.tokenId))).length;
    const limited = await rejectionOf(hold(flood, 3));
    expect(limited.code).toBe("RATE_LIMITED");
    expect(limited.message).toContain("the limit is 3");
    expect((await d.select().from(actions).where(eq(actions.tokenId, flood.tokenId))).length).toBe(actionsBefore);
    const sealed = (await allEntries(d)).filter((e) => e.type === "refusal/1" && e.data.code === "RATE_LIMITED" && e.data.stage === "decide");
    expect(sealed.length).toBeGreaterThan(0);
    expect(await codeOf(hold(other, 0))).toBe("APPROVAL_PENDING");
    // Concurrent holds of one token are counted one after another: never more than the cap.
    const burst = await Promise.all(Array.from({ length: 4 }, (_, i) => codeOf(hold(other, 10 + i))));
    expect(burst.filter((c) => c === "APPROVAL_PENDING")).toHaveLength(2);
    expect(burst.filter((c) => c === "RATE_LIMITED")).toHaveLength(2);
  });

  it("hostile (review's case): 205 held requests from one token do not hide another token's later request — it is on the first page", async () => {
    const d = db().handle.db;
    const deps = testDeps(db().handle, { maxHeldPerToken: 1000 });
    const host = await insertHost(d);
    const flood = await insertToken(d);
    const other = await insertToken(d);
    for (let i = 0; i < 205; i += 10) {
      await Promise.all(Array.from({ length: Math.min(10, 205 - i) }, (_, j) => codeOf(submitAction(deps, flood, { operation: "run_command", arguments: { host: host.name, command: `touch f${i + j}` }, channel: "mcp" }, { waitMs: 0 }))));
    }
    const late = await rejectionOf(submitAction(deps, other, { operation: "run_command", arguments: { host: host.name, command: "touch mine" }, channel: "mcp" }, { waitMs: 0 }));
    const lateId = String(late.details?.["action_id"]);
    // The listing every caller used before (first 200).
    expect((await listApprovals(d)).map((a) => a.action_id)).toContain(lateId);
    const page = await pageApprovals(d, { limit: 5 });
    expect(page.items.map((a) => a.action_id)).toContain(lateId);
    expect(page.has_more).toBe(true);
    expect(page.by_requester.find((r) => r.requester.id === flood.tokenId)?.count).toBe(205);
    expect(page.by_requester.find((r) => r.requester.id === other.tokenId)?.count).toBe(1);
    const second = await pageApprovals(d, { offset: 5, limit: 5 });
    expect(second.items.some((a) => a.requester.id === other.tokenId)).toBe(false);
  });
});
