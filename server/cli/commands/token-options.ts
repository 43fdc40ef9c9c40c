import { LeaseholdError } from "../../errors";
import { parseExpiry, type CreateTokenInput } from "../../tokens";

/**
 * The options `token create` and `mcp-config --create` share. Each flag is
 * given once; `--expires` is required (`never` must be said explicitly).
 */
export const TOKEN_CREATE_FLAGS = "--name N [--read-only] [--tools a,b] [--hosts h1,h2] --expires 30d|12h|90m|300s|never";

function list(value: string): string[] {
  return value.split(",").map((item) => item.trim()).filter((item) => item.length > 0);
}

/** Parses `args`; returns the create input and the arguments it did not consume. */
export function parseTokenCreateArgs(args: readonly string[], now: Date, nameFlag = "--name"): { input: Omit<CreateTokenInput, "createdBy">; rest: string[] } {
  const seen = new Set<string>();
  const rest: string[] = [];
  let name: string | undefined;
  let readOnly = false;
  let tools: string[] | null = null;
  let hosts: string[] | null = null;
  let expires: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const [flag, inline] = arg.startsWith("--") && arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const takesValue = flag === nameFlag || flag === "--tools" || flag === "--hosts" || flag === "--expires";
    if (!takesValue && flag !== "--read-only") {
      rest.push(arg);
      continue;
    }
    if (seen.has(flag)) throw new LeaseholdError("INVALID_ARGUMENT", `${flag} is given twice`);
    seen.add(flag);
    if (flag === "--read-only") {
      if (inline !== undefined) throw new LeaseholdError("INVALID_ARGUMENT", "--read-only takes no value");
      readOnly = true;
      continue;
    }
    const value = inline ?? args[++i];
    if (value === undefined || (inline === undefined && value.startsWith("--"))) throw new LeaseholdError("INVALID_ARGUMENT", `${flag} needs a value`);
    if (flag === nameFlag) name = value;
    else if (flag === "--tools") tools = list(value);
    else if (flag === "--hosts") hosts = list(value);
    else expires = value;
  }
  if (name === undefined) throw new LeaseholdError("INVALID_ARGUMENT", `${nameFlag} is required`);
  const expiry = parseExpiry(expires, now);
  if (!expiry.ok) throw new LeaseholdError("INVALID_ARGUMENT", expiry.message);
  return { input: { name, readOnly, tools, hosts, expiresAt: expiry.expiresAt }, rest };
}
