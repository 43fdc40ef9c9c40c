/**
 * `leasehold approvals list` / `show` print caller text — the command, env
 * names and values, cwd, stdin, the requesting token's name — with every
 * character of the escaped property set (Default_Ignorable, Cf, Cc, Co, Cn,
 * Cs, Zl, Zp, Bidi_Control) shown as a visible token: Unicode tag
 * characters, Hangul fillers, variation selectors, private-use and
 * unassigned code points included.
 */
import { eq } from "drizzle-orm";
import { expect, it } from "vitest";
import { captureCli, insertHost, insertToken, testDeps } from "../../../test/pipeline/support";
import { describeEachDatabase } from "../../../test/support/databases";
import { rejectionOf } from "../../../test/support/refusals";
import { submitAction } from "../../actions";
import { agentTokens } from "../../db/schema";
import { main } from "../main";

/** Any raw member of the escaped property set. */
const RAW = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}\p{Bidi_Control}]/u;

// Tag characters spelling "rm" after a visible "ls", Hangul fillers, variation selectors (BMP and supplement),
// a private-use character, an unassigned code point and a noncharacter.
const TAGS = "\u{e0001}\u{e0072}\u{e006d}\u{e007f}";
const FILLERS = "\u115f\u1160\u3164\uffa0";
const SELECTORS = "\ufe0f\u{e0100}";
const OTHER = "\ue000\u0378\uffff";

describeEachDatabase("leasehold approvals list: every invisible character shown as a token", (db) => {
  it("hostile: tag characters, Hangul fillers, variation selectors, private-use and unassigned code points in command, env values and token name print as ⟨U+…⟩, never raw", async () => {
    const d = db().handle.db;
    const host = await insertHost(d);
    const caller = await insertToken(d, { createdBy: "someone-else" });
    await d.update(agentTokens).set({ name: `bot${TAGS}` }).where(eq(agentTokens.id, caller.tokenId));
    const request = {
      operation: "run_command",
      arguments: { host: host.name, command: `ls ${TAGS}${FILLERS}x${SELECTORS}y${OTHER} && rm -rf ./build`, env: { LANG: `C${FILLERS}`, NOTE: `a${TAGS}${SELECTORS}${OTHER}` }, timeout_s: 30 },
      channel: "mcp" as const,
    };
    const held = await rejectionOf(submitAction(testDeps(db().handle), caller, request, { waitMs: 0 }));
    const actionId = String(held.details?.["action_id"]);

    for (const args of [["approvals", "list"], ["approvals", "show", actionId]]) {
      const out = captureCli(db().handle);
      expect(await main(args, out.ctx)).toBe(0);
      const lines = out.out.flatMap((line) => line.split("\n"));
      const raw = lines.filter((line) => RAW.test(line));
      expect(raw, `${args.join(" ")}: lines with a raw invisible character`).toEqual([]);
      // Risky spans (each invisible character is one) are marked ⟦ ⟧; read the text without the marks.
      const text = lines.join("\n").replace(/[⟦⟧]/g, "");
      expect(text).toContain("ls ⟨U+E0001⟩⟨U+E0072⟩⟨U+E006D⟩⟨U+E007F⟩⟨U+115F⟩⟨U+1160⟩⟨U+3164⟩⟨U+FFA0⟩x⟨U+FE0F⟩⟨U+E0100⟩y⟨U+E000⟩⟨U+0378⟩⟨U+FFFF⟩ && ");
      expect(text).toContain("LANG=C⟨U+115F⟩⟨U+1160⟩⟨U+3164⟩⟨U+FFA0⟩");
      expect(text).toContain("NOTE=a⟨U+E0001⟩⟨U+E0072⟩⟨U+E006D⟩⟨U+E007F⟩⟨U+FE0F⟩⟨U+E0100⟩⟨U+E000⟩⟨U+0378⟩⟨U+FFFF⟩");
      expect(text).toContain(`"bot⟨U+E0001⟩⟨U+E0072⟩⟨U+E006D⟩⟨U+E007F⟩"`);
    }
  });
});
