import { parseExpiry, type CreateTokenInput } from "../../tokens";
import { commaList } from "../args";
import { UsageError } from "../io";

/**
 * The options `token create` and `mcp-config --create` share (the name flag
 * is each command's own). `--expires` is required (`never` must be said
 * explicitly).
 */
export const TOKEN_CREATE_FLAGS = "--name N [--read-only] [--observe judged|any] [--tools a,b] [--hosts h1,h2] --expires 30d|12h|90m|300s|never";

export const TOKEN_CREATE_OPTIONS = {
  "read-only": { type: "boolean" },
  observe: { type: "string" },
  tools: { type: "string" },
  hosts: { type: "string" },
  expires: { type: "string" },
} as const;

/** The create input from parsed `TOKEN_CREATE_OPTIONS` values and the token's name. */
export function tokenCreateInput(
  name: string,
  values: { "read-only"?: boolean | undefined; observe?: string | undefined; tools?: string | undefined; hosts?: string | undefined; expires?: string | undefined },
  now: Date,
): Omit<CreateTokenInput, "createdBy"> {
  const expiry = parseExpiry(values.expires, now);
  if (!expiry.ok) throw new UsageError(expiry.message);
  const observe = values.observe ?? "judged";
  // `any` (sandbox-first): every run_command runs at once under the observe lease whatever its risk.
  if (observe !== "judged" && observe !== "any") throw new UsageError(`--observe must be judged (every call rated; the default) or any (every command runs at once under the read-only observe lease), not ${JSON.stringify(observe)}`);
  return {
    name,
    readOnly: values["read-only"] === true,
    observe,
    tools: values.tools === undefined ? null : commaList(values.tools),
    hosts: values.hosts === undefined ? null : commaList(values.hosts),
    expiresAt: expiry.expiresAt,
  };
}
