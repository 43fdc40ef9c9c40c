#!/usr/bin/env node
// A minimal MCP client (the official SDK's) for trying a hub from a shell,
// without an AI client: one tools/call, progress on stderr, the result's
// structured content as JSON on stdout. Exit 0 when the tool succeeded, 1
// when it answered with an error result (its {code, message, …} is printed),
// 2 on bad usage or when the hub could not be reached.
//
//   MCP_TOKEN=lh_… node tools/mcp-call.mjs run_command '{"host":"local","command":"uname -a"}'
//   node tools/mcp-call.mjs --url http://127.0.0.1:8700 --list
//
// Each run opens one MCP session and ends it (HTTP DELETE) before exiting.
// The token comes from MCP_TOKEN (not argv, where other users' `ps` can read
// it). --url defaults to http://127.0.0.1:8700, the hub's default address.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { parseArgs } from "node:util";

const USAGE = `usage: MCP_TOKEN=lh_… node tools/mcp-call.mjs [--url URL] [--timeout S] TOOL [JSON-ARGUMENTS]
       MCP_TOKEN=lh_… node tools/mcp-call.mjs [--url URL] --list`;

function fail(message) {
  console.error(`mcp-call: ${message}`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: { url: { type: "string", default: "http://127.0.0.1:8700" }, list: { type: "boolean", default: false }, timeout: { type: "string", default: "120" }, help: { type: "boolean", default: false } },
  });
} catch (error) {
  fail(`${error.message}\n${USAGE}`);
}
const { values, positionals } = parsed;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const token = process.env.MCP_TOKEN ?? "";
if (!token.startsWith("lh_")) fail(`set MCP_TOKEN to an lh_ token (\`leasehold token create\` or the one \`npm start\` printed)\n${USAGE}`);
if (!values.list && positionals.length === 0) fail(USAGE);
if (positionals.length > 2) fail(`too many arguments\n${USAGE}`);
const timeoutS = Number(values.timeout);
if (!Number.isFinite(timeoutS) || timeoutS <= 0) fail("--timeout must be a positive number of seconds");
let toolArgs = {};
if (positionals[1] !== undefined) {
  try {
    toolArgs = JSON.parse(positionals[1]);
  } catch (error) {
    fail(`the arguments are not JSON: ${error.message}`);
  }
  if (toolArgs === null || typeof toolArgs !== "object" || Array.isArray(toolArgs)) fail("the arguments must be a JSON object");
}
let endpoint;
try {
  endpoint = new URL("/api/mcp", values.url);
} catch {
  fail(`--url is not a URL: ${values.url}`);
}

const transport = new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${token}` } } });
const client = new Client({ name: "leasehold-mcp-call", version: "1.0.0" });
try {
  await client.connect(transport);
} catch (error) {
  fail(`could not connect to ${endpoint}: ${error.message}`);
}
try {
  if (values.list) {
    const { tools } = await client.listTools();
    for (const tool of tools) console.log(`${tool.name}\t${(tool.description ?? "").split(". ")[0]}`);
    process.exitCode = 0;
  } else {
    const result = await client.callTool({ name: positionals[0], arguments: toolArgs }, CallToolResultSchema, {
      timeout: timeoutS * 1000,
      onprogress: (p) => console.error(`progress ${p.progress}: ${p.message ?? ""}`),
    });
    const body = result.structuredContent ?? result.content;
    console.log(JSON.stringify(body, null, 2));
    process.exitCode = result.isError ? 1 : 0;
  }
} catch (error) {
  console.error(`mcp-call: ${error.message}`);
  process.exitCode = 2;
} finally {
  // End the session (HTTP DELETE): a shell loop of calls must not pile up
  // open sessions until the token hits its per-token session cap.
  await transport.terminateSession().catch((error) => console.error(`mcp-call: could not end the session: ${error.message}`));
  await client.close().catch(() => undefined);
}
