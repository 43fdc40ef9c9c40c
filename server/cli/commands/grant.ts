import { requireActiveAdmin } from "../../admins";
import { passkeySettingsOf } from "../../passkeys/relying-party";
import { createGrant, listGrants, revokeGrant, type GrantRow } from "../../policy/grants";
import { neutraliseOneLine } from "../../text";
import type { CliContext } from "../context";
import { EXIT, UsageError } from "../io";
import { parseCommandArgs, parseExpiry, requireFlag, splitSubcommand } from "../args";

const USAGE = [
  "leasehold grant create --tool T --host H --max-risk LEVEL --uses N --expires D [--pattern P]",
  "                       [--env KEY=VALUE]... [--stdin-sha256 HEX] [--cwd PATH] --as ADMIN",
  "       leasehold grant list",
  "       leasehold grant revoke ID --as ADMIN",
  "",
  "LEVEL is read_only, low, medium or high (critical is never grantable). D is a duration",
  "(30m, 2h, 7d) or an ISO time. P is a regular expression that must match the whole command",
  "(or code, or path). A grant covers the whole action: it matches only an action whose",
  "environment is exactly the --env pairs listed (none if none), whose stdin is empty or has",
  "the --stdin-sha256 digest (sha256 of its UTF-8 bytes), and whose working directory is",
  "--cwd (workspace-relative; default the workspace root). Anything else is held for a person.",
  "--as names the acting admin; the change is sealed in the ledger.",
  "",
  "A grant whose LEVEL is at or above LEASEHOLD_PASSKEY_APPROVAL_RISK (default high) needs a",
  "passkey signature over its whole scope, which only the browser can give: such grants are",
  "refused here; create them on the Grants page of the admin UI. With the threshold off the",
  "CLI creates them (whoever reaches the database is trusted).",
].join("\n");

type Parsed =
  | { sub: "list" }
  | { sub: "revoke"; id: string; as: string }
  | {
      sub: "create";
      as: string;
      tool: string;
      host: string;
      maxRisk: string;
      uses: number;
      expiresAt: Date;
      pattern: string | null;
      env: Record<string, string>;
      stdinSha256: string | null;
      cwd: string | null;
    };

const CREATE_OPTIONS = {
  tool: { type: "string" },
  host: { type: "string" },
  "max-risk": { type: "string" },
  uses: { type: "string" },
  expires: { type: "string" },
  pattern: { type: "string" },
  env: { type: "string", multiple: true },
  "stdin-sha256": { type: "string" },
  cwd: { type: "string" },
  as: { type: "string" },
} as const;

/** `--env KEY=VALUE` (repeatable) → a map; a name given twice is refused. Names and values are validated by createGrant. */
function envPairs(pairs: readonly string[] | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs ?? []) {
    const at = pair.indexOf("=");
    if (at <= 0) throw new UsageError(`--env needs KEY=VALUE, got ${JSON.stringify(pair)}`);
    const name = pair.slice(0, at);
    if (Object.hasOwn(env, name)) throw new UsageError(`--env ${name} is given twice`);
    Object.defineProperty(env, name, { value: pair.slice(at + 1), enumerable: true, writable: true, configurable: true });
  }
  return env;
}

/**
 * One grant as a line of `grant list`. Patterns, env values and cwd were
 * typed by a person or copied from an agent's action: every control,
 * invisible and direction-changing character is written as an escape
 * (`\u202e`, `\u200b`), so `ftm<U+202E>exe` cannot print as `exe.mtf` and
 * `r<U+200B>m` cannot print as `rm`. The escapes are regex syntax, so a
 * printed pattern still reads as what it matches.
 */
export function grantLine(g: Pick<GrantRow, "id" | "tool" | "host" | "maxRisk" | "usesRemaining" | "expiresAt" | "argumentPattern" | "env" | "stdinSha256" | "cwd">): string {
  const pattern = g.argumentPattern === null ? "any command" : `pattern ${JSON.stringify(g.argumentPattern)}`;
  return neutraliseOneLine(`${g.id}  ${g.tool} on ${g.host}  ≤${g.maxRisk}  ${g.usesRemaining} uses left  until ${g.expiresAt.toISOString()}  ${pattern}  ${scopeText(g)}`).text;
}

function scopeText(g: { env: Record<string, string>; stdinSha256: string | null; cwd: string }): string {
  // Sorted by name: jsonb keeps its own key order.
  const env = Object.entries(g.env ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return [
    env.length === 0 ? "env none" : `env ${env.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(" ")}`,
    g.stdinSha256 === null ? "stdin none" : `stdin sha256:${g.stdinSha256}`,
    `cwd ${JSON.stringify(g.cwd)}`,
  ].join("  ");
}

function parse(args: string[]): Parsed {
  const { sub, rest } = splitSubcommand(args, ["create", "list", "revoke"]);
  if (sub === "list") {
    parseCommandArgs(rest, {});
    return { sub };
  }
  if (sub === "revoke") {
    const { values, positionals } = parseCommandArgs(rest, { as: { type: "string" } }, { min: 1, max: 1, label: "grant ID" });
    return { sub, id: positionals[0] as string, as: requireFlag(values, "as") };
  }
  const { values } = parseCommandArgs(rest, CREATE_OPTIONS);
  const usesText = requireFlag(values, "uses");
  if (!/^\d{1,6}$/.test(usesText)) throw new UsageError("--uses must be a whole number");
  return {
    sub,
    as: requireFlag(values, "as"),
    tool: requireFlag(values, "tool"),
    host: requireFlag(values, "host"),
    maxRisk: requireFlag(values, "max-risk"),
    uses: Number(usesText),
    expiresAt: parseExpiry(requireFlag(values, "expires")),
    pattern: values.pattern ?? null,
    env: envPairs(values.env),
    stdinSha256: values["stdin-sha256"] ?? null,
    cwd: values.cwd ?? null,
  };
}

export const grantCommand = {
  name: "grant",
  summary: "create, list or revoke pre-approved grants (as a named admin)",
  usage: USAGE,
  async run(args: string[], ctx: CliContext): Promise<number> {
    // A UsageError reaches main(), which prints it in one line and exits 2.
    const parsed: Parsed = parse(args);
    const lines = await ctx.withDatabase(`leasehold grant ${parsed.sub}`, async ({ handle, config }) => {
      if (parsed.sub === "list") {
        const active = await listGrants(handle.db);
        if (active.length === 0) return ["no active grants"];
        return active.map(grantLine);
      }
      const admin = await requireActiveAdmin(handle.db, parsed.as);
      if (parsed.sub === "revoke") {
        const grant = await revokeGrant(handle.db, admin, parsed.id);
        return [`grant ${grant.id} revoked by ${admin.username}`];
      }
      // No passkey here: at or above the threshold createGrant refuses, naming the browser page.
      const grant = await createGrant(handle.db, admin, parsed, { settings: passkeySettingsOf(config) });
      return [neutraliseOneLine(`grant ${grant.id} created: ${grant.tool} on ${grant.host} up to ${grant.maxRisk}, ${grant.usesRemaining} uses, until ${grant.expiresAt.toISOString()}; ${scopeText(grant)}`).text];
    });
    for (const line of lines) ctx.out(line);
    return EXIT.ok;
  },
};
