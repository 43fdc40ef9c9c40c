/**
 * Ready-to-paste MCP client settings for a token: the `claude mcp add` line
 * and the `mcpServers` JSON block. Shared by `leasehold mcp-config` and the
 * browser's token page, so both print the same thing.
 */
export function clientSettings(publicUrl: string, secret: string): { command: string; json: string } {
  const url = `${publicUrl}/api/mcp`;
  return {
    command: `claude mcp add --transport http leasehold ${url} --header "Authorization: Bearer ${secret}"`,
    json: JSON.stringify({ mcpServers: { leasehold: { type: "http", url, headers: { Authorization: `Bearer ${secret}` } } } }, null, 2),
  };
}
