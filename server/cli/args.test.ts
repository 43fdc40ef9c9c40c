import { describe, expect, it } from "vitest";
import { commaList, parseCommandArgs, parseExpiry, requireFlag, splitSubcommand } from "./args";
import type { CliContext } from "./context";
import { UsageError } from "./io";
import { main } from "./main";

const OPTIONS = { name: { type: "string" }, "read-only": { type: "boolean" }, witness: { type: "string", multiple: true } } as const;

/** The UsageError message `fn` throws. */
function usageError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as UsageError).message;
  }
  throw new Error("expected a UsageError");
}

describe("parseCommandArgs", () => {
  it("takes --flag value and --flag=value alike, booleans and repeatable flags", () => {
    expect(parseCommandArgs(["--name", "a"], OPTIONS).values).toEqual({ name: "a" });
    expect(parseCommandArgs(["--name=a b"], OPTIONS).values).toEqual({ name: "a b" });
    expect(parseCommandArgs(["--name=-x"], OPTIONS).values).toEqual({ name: "-x" });
    expect(parseCommandArgs(["--name="], OPTIONS).values).toEqual({ name: "" });
    expect(parseCommandArgs(["--read-only", "--name", "a"], OPTIONS).values).toEqual({ "read-only": true, name: "a" });
    expect(parseCommandArgs(["--witness", "k1", "--witness=k2"], OPTIONS).values).toEqual({ witness: ["k1", "k2"] });
    expect(parseCommandArgs([], OPTIONS).values).toEqual({});
  });

  it("refuses an unknown flag, naming it", () => {
    expect(usageError(() => parseCommandArgs(["--nmae", "a"], OPTIONS))).toBe("unknown option --nmae");
    expect(usageError(() => parseCommandArgs(["-n", "a"], OPTIONS))).toBe("unknown option -n");
    expect(usageError(() => parseCommandArgs(["--anything"], {}))).toBe("unknown option --anything");
  });

  it("refuses a missing value, and a flag taken for one", () => {
    expect(usageError(() => parseCommandArgs(["--name"], OPTIONS))).toBe("--name needs a value");
    expect(usageError(() => parseCommandArgs(["--name", "--read-only"], OPTIONS))).toBe('--name needs a value (one starting with "-" is written --name=--read-only)');
    expect(usageError(() => parseCommandArgs(["--witness"], OPTIONS))).toBe("--witness needs a value");
  });

  it("refuses a value for a boolean flag", () => {
    expect(usageError(() => parseCommandArgs(["--read-only=yes"], OPTIONS))).toBe("--read-only takes no value");
  });

  it("refuses a single-value flag given twice", () => {
    expect(usageError(() => parseCommandArgs(["--name", "a", "--name=b"], OPTIONS))).toBe("--name is given twice");
    expect(usageError(() => parseCommandArgs(["--read-only", "--read-only"], OPTIONS))).toBe("--read-only is given twice");
  });

  it("keeps positionals within bounds", () => {
    expect(parseCommandArgs(["ID", "--name", "a"], OPTIONS, { min: 1, max: 1 }).positionals).toEqual(["ID"]);
    expect(parseCommandArgs(["--", "--not-a-flag"], {}, { min: 1, max: 1 }).positionals).toEqual(["--not-a-flag"]);
    expect(usageError(() => parseCommandArgs(["extra"], OPTIONS))).toBe('unexpected argument "extra"');
    expect(usageError(() => parseCommandArgs(["a", "b"], {}, { min: 1, max: 1 }))).toBe('unexpected argument "b"');
    expect(usageError(() => parseCommandArgs([], {}, { min: 1, max: 1, label: "grant ID" }))).toBe("missing grant ID");
    expect(usageError(() => parseCommandArgs([], {}, { min: 1, max: 2 }))).toBe("missing argument");
  });
});

describe("flag helpers", () => {
  it("requireFlag names the missing flag", () => {
    expect(requireFlag({ as: "ops" }, "as")).toBe("ops");
    expect(requireFlag({ as: "" }, "as")).toBe("");
    expect(usageError(() => requireFlag({}, "as"))).toBe("--as is required");
    expect(usageError(() => requireFlag({ out: undefined }, "out", "the FILE to write"))).toBe("--out is required: the FILE to write");
  });

  it("commaList splits and trims, dropping empty items", () => {
    expect(commaList("a, b,,c ")).toEqual(["a", "b", "c"]);
    expect(commaList("")).toEqual([]);
  });

  it("splitSubcommand lists the choices when one is missing or unknown", () => {
    expect(splitSubcommand(["list", "x"], ["create", "list"])).toEqual({ sub: "list", rest: ["x"] });
    expect(usageError(() => splitSubcommand([], ["create", "list"]))).toBe("missing subcommand (one of: create, list)");
    expect(usageError(() => splitSubcommand(["crate"], ["create", "list"]))).toBe('unknown subcommand "crate" (one of: create, list)');
  });

  it("parseExpiry takes a duration from now or an ISO time, and refuses anything else", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseExpiry("30m", now)).toEqual(new Date("2026-01-01T00:30:00Z"));
    expect(parseExpiry("2h", now)).toEqual(new Date("2026-01-01T02:00:00Z"));
    expect(parseExpiry("7d", now)).toEqual(new Date("2026-01-08T00:00:00Z"));
    expect(parseExpiry("2026-03-04T05:06:07Z", now)).toEqual(new Date("2026-03-04T05:06:07Z"));
    expect(usageError(() => parseExpiry("soon", now))).toBe('--expires "soon" is neither a duration (30m, 2h, 7d) nor an ISO time');
    for (const bad of ["", "0m", "1y", "-1d"]) expect(() => parseExpiry(bad, now)).toThrow(UsageError);
  });
});

describe("usage errors through main(): exit 2, one line naming the flag", () => {
  async function run(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
    const out: string[] = [];
    const err: string[] = [];
    const ctx: CliContext = {
      env: {},
      cwd: process.cwd(),
      out: (line) => out.push(line),
      err: (line) => err.push(line),
      loadWeb: () => Promise.reject(new Error("no web")),
      withDatabase: () => Promise.reject(new Error("a usage error must not reach the database")),
    };
    return { code: await main(argv, ctx), out, err };
  }

  const cases: Array<[string[], string]> = [
    [["token", "create", "--name", "x", "--expires", "1d", "--bogus"], "leasehold token: unknown option --bogus"],
    [["token", "create", "--name"], "leasehold token: --name needs a value"],
    [["token", "create", "--name", "x"], "leasehold token: --expires is required"],
    [["token", "create", "--name", "x", "--expires", "1y"], 'leasehold token: --expires "1y" is not a duration'],
    [["token", "create", "--name", "x", "--read-only=1", "--expires", "1d"], "leasehold token: --read-only takes no value"],
    [["token", "revoke"], "leasehold token: missing token ID"],
    [["token"], "leasehold token: missing subcommand (one of: create, list, revoke)"],
    [["mcp-config"], "leasehold mcp-config: set MCP_TOKEN=lh_... in the environment or give --create NAME"],
    [["mcp-config", "--token", "lh_x"], "leasehold mcp-config: --token is refused: a token on the command line is readable by every local user (/proc/PID/cmdline); pass it in MCP_TOKEN"],
    [["grant", "create", "--tool", "t", "--host", "h", "--max-risk", "low", "--uses", "1", "--expires", "soon", "--as", "ops"], 'leasehold grant: --expires "soon" is neither'],
    [["grant", "revoke", "--as", "ops"], "leasehold grant: missing grant ID"],
    [["approvals", "deny", "ID", "--as", "ops"], "leasehold approvals: --reason is required"],
    [["approvals", "list", "extra"], 'leasehold approvals: unexpected argument "extra"'],
    [["admin", "create"], "leasehold admin: --name is required"],
    [["host", "enrol-code", "--name", "web-1", "--ttl", "1d"], 'leasehold host: --ttl "1d" must look like 90s, 15m or 2h'],
    [["host", "enrol-code", "--ttl", "5m"], "leasehold host: --name is required"],
    [["ledger", "witness", "add"], "leasehold ledger: missing witness KEY"],
    [["ledger", "keys"], 'leasehold ledger: unknown subcommand "keys"'],
    [["export"], "leasehold export: --out is required"],
    [["verify", "--key", "x+1+AQ=="], "leasehold verify: missing FILE"],
    [["verify", "file"], "leasehold verify: --key is required"],
    [["verify", "file", "--key", "/nonexistent-key-file"], 'leasehold verify: --key "/nonexistent-key-file" is neither a verifier key nor a readable file'],
    [["migrate", "now"], 'leasehold migrate: unexpected argument "now"'],
    [["start", "--port", "80"], "leasehold start: unknown option --port"],
  ];
  it.each(cases)("%j", async (argv, expected) => {
    const r = await run(argv);
    expect(r.code).toBe(2);
    expect(r.out).toEqual([]);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toContain(expected);
    expect(r.err[0]).not.toContain("\n");
    expect(r.err[0]).toMatch(new RegExp(`\\(try: leasehold ${argv[0]} --help\\)$`));
  });
});
