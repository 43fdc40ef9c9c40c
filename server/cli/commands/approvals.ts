import { requireActiveAdmin } from "../../admins";
import { APPROVAL_PAGE, approve, deny, pageApprovals, showApproval, type ApprovalListing, type ApprovalPage, type ApprovalState } from "../../approvals";
import { passkeySettingsOf } from "../../passkeys/relying-party";
import { approvalViewOf, escapeForTerminal, renderApproval } from "../../approvals/view";
import type { CliContext } from "../context";
import { EXIT, UsageError } from "../io";
import { parseCommandArgs, requireFlag, splitSubcommand } from "../args";

const USAGE = [
  "leasehold approvals list [--state pending|approved|denied|expired|all] [--offset N] [--limit N]",
  "       leasehold approvals show ID",
  "       leasehold approvals approve ID [--reason R] --as ADMIN",
  "       leasehold approvals deny ID --reason R --as ADMIN",
  "",
  "ID is an approval id or the action id an agent reports. list and show print each held",
  "action in full: command or code with its risky spans between ⟦ ⟧, cwd, environment",
  "(values scrubbed), stdin (size, sha256, scrubbed preview), timeout, who asked (token name,",
  "session), the risk reasons, deadline, action id and action hash. Caller text is printed",
  "terminal-safe: control and invisible characters appear as ⟨ESC⟩, ⟨U+202E⟩, … tokens.",
  `list pages (default ${APPROVAL_PAGE.defaultLimit}, at most ${APPROVAL_PAGE.maxLimit}) in turns: every requester's oldest request, then`,
  "every requester's second, …; a header counts each requester's requests.",
  "--as names the acting admin (see `leasehold admin create`). The CLI trusts whoever can",
  "run it against the hub's data directory or DATABASE_URL; the decision is sealed in the",
  "ledger under that admin, exactly like the browser's approve/deny.",
  "Passkeys: approving an action at or above LEASEHOLD_PASSKEY_APPROVAL_RISK (default high)",
  "needs a passkey signature over that action, which only the browser can make: the CLI",
  "refuses such approvals (\"needs a passkey signature\") — approve them at ADMIN-URL/approvals.",
  "Denying needs no passkey.",
].join("\n");

const STATES = ["pending", "approved", "denied", "expired", "all"] as const;

type Parsed =
  | { sub: "list"; state: ApprovalState | "all"; offset: number; limit: number }
  | { sub: "show"; id: string }
  | { sub: "approve" | "deny"; id: string; reason: string | undefined; as: string };

function wholeNumber(flag: string, text: string | undefined, fallback: number, max: number): number {
  if (text === undefined) return fallback;
  if (!/^\d{1,6}$/.test(text) || Number(text) > max) throw new UsageError(`--${flag} must be a whole number from 0 to ${max}`);
  return Number(text);
}

function parse(args: string[]): Parsed {
  const { sub, rest } = splitSubcommand(args, ["list", "show", "approve", "deny"]);
  if (sub === "list") {
    const { values } = parseCommandArgs(rest, { state: { type: "string" }, offset: { type: "string" }, limit: { type: "string" } });
    const state = values.state ?? "pending";
    if (!(STATES as readonly string[]).includes(state)) throw new UsageError(`--state must be one of ${STATES.join(", ")}`);
    const limit = wholeNumber("limit", values.limit, APPROVAL_PAGE.defaultLimit, APPROVAL_PAGE.maxLimit);
    if (limit < 1) throw new UsageError(`--limit must be a whole number from 1 to ${APPROVAL_PAGE.maxLimit}`);
    return { sub, state: state as ApprovalState | "all", offset: wholeNumber("offset", values.offset, 0, 999_999), limit };
  }
  if (sub === "show") {
    const { positionals } = parseCommandArgs(rest, {}, { min: 1, max: 1, label: "approval or action ID" });
    return { sub, id: positionals[0] as string };
  }
  const { values, positionals } = parseCommandArgs(rest, { reason: { type: "string" }, as: { type: "string" } }, { min: 1, max: 1, label: "approval or action ID" });
  const reason = sub === "deny" ? requireFlag(values, "reason") : values.reason;
  return { sub, id: positionals[0] as string, reason, as: requireFlag(values, "as") };
}

function requesterName(r: ApprovalListing["requester"]): string {
  const name = r.name === null ? "?" : JSON.stringify(escapeForTerminal(r.name));
  return r.kind === "token" ? `token ${name}` : r.kind === "admin" ? `admin ${name}` : "unknown";
}

function pageLines(page: ApprovalPage, state: string, now: Date): string[] {
  if (page.total === 0) return [`no ${state === "all" ? "" : `${state} `}approvals`];
  const lines = [
    `${page.total} ${state === "all" ? "" : `${state} `}approval(s) from ${page.by_requester.length} requester(s): ${page.by_requester.map((r) => `${requesterName(r.requester)} ${r.count}`).join(", ")}`,
    `showing ${page.items.length === 0 ? "none" : `${page.offset + 1}–${page.offset + page.items.length}`} (in turns: each requester's oldest first)${page.has_more ? `; next page: --offset ${page.offset + page.items.length}` : ""}`,
  ];
  for (const item of page.items) lines.push("", ...renderApproval(approvalViewOf(item), now));
  return lines;
}

export const approvalsCommand = {
  name: "approvals",
  summary: "list or show held actions in full, approve or deny one (as a named admin)",
  usage: USAGE,
  async run(args: string[], ctx: CliContext): Promise<number> {
    // A UsageError reaches main(), which prints it in one line and exits 2.
    const parsed: Parsed = parse(args);
    const lines = await ctx.withDatabase(`leasehold approvals ${parsed.sub}`, async ({ config, handle }) => {
      if (parsed.sub === "list") {
        const page = await pageApprovals(handle.db, { state: parsed.state, offset: parsed.offset, limit: parsed.limit });
        return pageLines(page, parsed.state, new Date());
      }
      if (parsed.sub === "show") return renderApproval(approvalViewOf(await showApproval(handle.db, parsed.id)));
      const admin = await requireActiveAdmin(handle.db, parsed.as);
      // The passkey rule applies here too: the CLI has no passkey, so approvals at or above
      // LEASEHOLD_PASSKEY_APPROVAL_RISK are refused ("needs a passkey signature") — approve them in the browser.
      const row =
        parsed.sub === "approve"
          ? await approve(handle.db, parsed.id, admin, parsed.reason ?? null, { passkey: { settings: passkeySettingsOf(config) }, fourEyesCritical: config.fourEyesCritical === true })
          : await deny(handle.db, parsed.id, admin, parsed.reason ?? "");
      return [`approval ${row.id} (action ${row.actionId}) ${row.state} by ${admin.username} (action_hash ${row.actionHash})`];
    });
    for (const line of lines) ctx.out(line);
    return EXIT.ok;
  },
};
