import { describe, expect, it } from "vitest";
import type { CliContext } from "../context";
import { mcpConfigCommand, oauthClientSettings } from "./mcp-config";

/** A context whose database must not be touched: `--oauth` needs only the public URL. */
function context(env: Record<string, string>): { ctx: CliContext; lines: string[] } {
  const lines: string[] = [];
  const ctx: CliContext = {
    env,
    cwd: "/nonexistent-leasehold-cwd",
    out: (line) => lines.push(line),
    err: (line) => lines.push(`ERR ${line}`),
    loadWeb: () => Promise.reject(new Error("no web front end in this test")),
    withDatabase: () => Promise.reject(new Error("mcp-config --oauth must not open the database")),
  };
  return { ctx, lines };
}

describe("mcp-config's OAuth-ready settings", () => {
  it("name the MCP URL with no Authorization header, and where consent happens", () => {
    const lines = oauthClientSettings("https://hub.example");
    const text = lines.join("\n");
    expect(lines).toContain("claude mcp add --transport http leasehold https://hub.example/api/mcp");
    const json = JSON.parse(text.slice(text.indexOf("{"), text.lastIndexOf("}") + 1)) as { mcpServers: { leasehold: Record<string, unknown> } };
    expect(json.mcpServers.leasehold).toEqual({ type: "http", url: "https://hub.example/api/mcp" });
    expect(text).not.toMatch(/Authorization:|Bearer|lh_/);
    expect(text).toContain("https://hub.example/oauth/authorize");
    expect(text).toContain("https://hub.example/sign-in");
    expect(text).toMatch(/Read-only.*Access expires/);
    expect(text).toContain("https://hub.example/tokens");
  });

  it("`--oauth` prints them from the configured public URL without a token or the database", async () => {
    const { ctx, lines } = context({ LEASEHOLD_PUBLIC_URL: "https://hub.example/" });
    expect(await mcpConfigCommand.run(["--oauth"], ctx)).toBe(0);
    expect(lines).toEqual(oauthClientSettings("https://hub.example"));
  });

  it("`--oauth` takes no token options (they would suggest a token is involved)", async () => {
    const { ctx } = context({});
    await expect(mcpConfigCommand.run(["--oauth", "--create", "x"], ctx)).rejects.toThrow("--oauth prints settings without a token and takes no other option (got --create)");
    await expect(mcpConfigCommand.run(["--oauth", "--read-only"], ctx)).rejects.toThrow(/got --read-only/);
  });

  it("`--oauth` with a bad setting fails naming the variable", async () => {
    const { ctx } = context({ LEASEHOLD_PUBLIC_URL: "not a url" });
    await expect(mcpConfigCommand.run(["--oauth"], ctx)).rejects.toThrow(/LEASEHOLD_PUBLIC_URL/);
  });
});
