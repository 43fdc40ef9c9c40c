/**
 * /api/mcp against the real hub (`leasehold start`), with the SDK's own
 * client (Client + StreamableHTTPClientTransport), on PGlite and on a real
 * PostgreSQL server. The requirement each test proves is in its title;
 * server/mcp/README.md maps docs/design.md#mcp to these tests.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseKind } from "../../server/db";
import { runFuzz } from "../../server/mcp/bench/fuzz-cases";
import { decodeBase64Strict } from "../../server/trust/ledger/base64";
import { verifyCheckpointNote } from "../../server/trust/ledger/checkpoint";
import { verifyInclusion } from "../../server/trust/ledger/proof";
import { hubDatabaseFor, testPostgresUrl } from "../support/databases";
import { runCli, startHub, type RunningHub } from "../support/hub-process";
import { checkedResults, cliEnv, connectClient, createTokenViaCli, FULL_TOOLS, INITIALIZE, MUTATING_TOOLS, rawPost, READ_ONLY_TOOLS, sleep, type HubAddress } from "./support";

/** Enough generated requests to meet every kind the generator makes many times over; `npm run bench -- --only mcp-fuzz` sends 100,000. */
const FUZZ_REQUESTS = 1500;

/** Declares the suite for one database kind (one test file per kind, so vitest runs them in parallel). */
export function defineMcpHubSuite(kind: DatabaseKind): void {
  describe(`MCP endpoint on a real hub [${kind}]`, () => {
    if (kind === "postgres" && !testPostgresUrl()) {
      it("needs a PostgreSQL server (TEST_POSTGRES_URL)", () => {
        throw new Error("TEST_POSTGRES_URL is not set: run `npm test`");
      });
      return;
    }
    let hub: RunningHub;
    let second: RunningHub | undefined;
    let address: HubAddress;
    let drop: (() => Promise<void>) | undefined;
    const tokens: Record<"full" | "readOnly" | "healthOnly" | "short" | "victim" | "other" | "capped", { id: string; secret: string }> = {} as never;
    let shortExpiresAt = 0;

    beforeAll(async () => {
      const database = await hubDatabaseFor(kind);
      const databaseUrl = database.url;
      drop = database.drop;
      // Short idle sessions so expiry is testable; a generous rate so only the rate test meets the limit.
      // No local guest: this suite checks the endpoint with no host enrolled (actions-suite.ts has hosts).
      const env = { DATABASE_URL: databaseUrl, LEASEHOLD_MCP_SESSION_IDLE_S: "3", LEASEHOLD_MCP_RATE_PER_MINUTE: "1000000", LEASEHOLD_LOCAL_GUEST: "0" };
      hub = await startHub(env);
      address = { url: hub.url, port: hub.port, dataDir: hub.dataDir, ...(databaseUrl === undefined ? {} : { databaseUrl }) };
      // A second process on the same database is a replica of the same hub: it shares the first's keys (docs/deploy.md#identity).
      const secondStart = kind === "postgres" ? startHub({ ...env, LEASEHOLD_KEY_DIR: hub.dataDir, LEASEHOLD_MCP_RATE_PER_MINUTE: "40", LEASEHOLD_MCP_MAX_STREAMS: "1", LEASEHOLD_MCP_SESSIONS_PER_TOKEN: "2" }) : Promise.resolve(undefined);
      const created = await Promise.all([
        createTokenViaCli(address, ["--name", "full", "--expires", "1d"]),
        createTokenViaCli(address, ["--name", "reader", "--read-only", "--expires", "1d"]),
        createTokenViaCli(address, ["--name", "health only", "--tools", "health", "--expires", "never"]),
        createTokenViaCli(address, ["--name", "short", "--expires", "4s"]),
        createTokenViaCli(address, ["--name", "victim", "--expires", "1d"]),
        createTokenViaCli(address, ["--name", "other", "--expires", "1d"]),
        createTokenViaCli(address, ["--name", "capped", "--expires", "1d"]),
      ]);
      shortExpiresAt = Date.now() + 4000;
      [tokens.full, tokens.readOnly, tokens.healthOnly, tokens.short, tokens.victim, tokens.other, tokens.capped] = created as [never, never, never, never, never, never, never];
      second = await secondStart;
    });

    afterAll(async () => {
      await second?.stop();
      await hub?.stop();
      await drop?.();
    });

    it("initialize, tools/list and tools/call for every tool; results carry structured content", async () => {
      const { client, transport } = await connectClient(hub.url, tokens.full.secret);
      expect(transport.sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(client.getServerVersion()?.name).toBe("leasehold");
      const listed = await client.listTools();
      expect(listed.tools.map((t) => t.name).sort()).toEqual(FULL_TOOLS);
      for (const tool of listed.tools) {
        expect(tool.inputSchema.type).toBe("object");
        expect(tool.outputSchema?.type, tool.name).toBe("object");
        // Not mutating (a read-only token sees them: they only move or end this token's own actions), yet not read-only either.
        if (tool.name !== "approval_wait" && tool.name !== "action_cancel") expect(tool.annotations?.readOnlyHint, tool.name).toBe(!MUTATING_TOOLS.includes(tool.name));
      }

      const health = await client.callTool({ name: "health", arguments: {} });
      expect(health.isError ?? false).toBe(false);
      expect(health.structuredContent).toMatchObject({ status: "ok", database: { kind } });

      const caps = await client.callTool({ name: "list_capabilities", arguments: { limit: 2 } });
      expect(caps.structuredContent).toMatchObject({ offset: 0, limit: 2, has_more: true });
      const capsPage = caps.structuredContent as { capabilities: Array<{ id: string; status: string; readiness: { state: string } }>; total: number };
      expect(capsPage.capabilities).toHaveLength(2);
      // Nothing is ready without a host reporting it: readiness is measured, never assumed.
      for (const c of capsPage.capabilities) expect(c.readiness.state).toBe("declared");
      const all = await client.callTool({ name: "list_capabilities", arguments: { limit: 200 } });
      const allPage = all.structuredContent as { capabilities: Array<{ id: string; status: string }>; has_more: boolean };
      expect(allPage.has_more).toBe(false);
      expect(allPage.capabilities.find((c) => c.id === "egress-shell")?.status).toBe("not_enabled");
      const past = await client.callTool({ name: "list_capabilities", arguments: { offset: 1000 } });
      expect(past.structuredContent).toMatchObject({ capabilities: [], has_more: false });

      const hosts = await client.callTool({ name: "hosts_list", arguments: {} });
      expect(hosts.structuredContent).toEqual({ hosts: [], offset: 0, limit: 50, total: 0, has_more: false });

      // Token creation sealed entries; wait for the integrator's checkpoint to cover them.
      let checkpoint: Record<string, unknown> = {};
      for (let i = 0; i < 50; i++) {
        const cp = await client.callTool({ name: "audit_checkpoint", arguments: {} });
        checkpoint = cp.structuredContent as Record<string, unknown>;
        if (!cp.isError && (checkpoint.tree_size as number) >= 6) break;
        await sleep(200);
      }
      expect(checkpoint.tree_size).toBeGreaterThanOrEqual(6);
      expect(checkpoint.cosignatures).toEqual([]);
      const verified = verifyCheckpointNote(checkpoint.checkpoint as string, checkpoint.verifier_key as string);
      expect(verified.ok).toBe(true);

      const proof = await client.callTool({ name: "audit_proof", arguments: { leaf_index: 2, tree_size: checkpoint.tree_size } });
      const p = proof.structuredContent as { leaf_hash: string; proof: string[]; tree_size: number; checkpoint: string };
      expect(p.checkpoint).toBe(checkpoint.checkpoint);
      if (!verified.ok) return;
      const check = verifyInclusion(decodeBase64Strict(p.leaf_hash)!, 2, p.tree_size, p.proof.map((h) => decodeBase64Strict(h)!), verified.checkpoint.root);
      expect(check).toEqual({ ok: true });

      const bad = await client.callTool({ name: "audit_proof", arguments: { leaf_index: "2", extra: true } });
      expect(bad.isError).toBe(true);
      expect(bad.structuredContent).toMatchObject({ code: "INVALID_ARGUMENT", retryable: false });
      expect(typeof (bad.structuredContent as { hint: unknown }).hint).toBe("string");
      const missing = await client.callTool({ name: "audit_proof", arguments: { leaf_index: 1_000_000 } });
      expect(missing.structuredContent).toMatchObject({ code: "NOT_FOUND" });
      const unknown = await client.callTool({ name: "no_such_tool", arguments: {} });
      expect(unknown).toMatchObject({ isError: true, structuredContent: { code: "NOT_FOUND" } });
      // Every result above also matched its tool's listed outputSchema, errors included (connectClient checks each).
      for (const name of ["health", "list_capabilities", "hosts_list", "audit_checkpoint", "audit_proof"]) expect(checkedResults.get(name)?.ok, name).toBeGreaterThan(0);
      expect(checkedResults.get("audit_proof")?.error).toBeGreaterThan(0);
      await transport.terminateSession();
      await client.close();
    });

    it("a read-only token sees no mutating tool and is refused one by name (403 insufficient_scope)", async () => {
      const { client, transport } = await connectClient(hub.url, tokens.readOnly.secret);
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(READ_ONLY_TOOLS);
      await expect(client.callTool({ name: "run_command", arguments: { host: "h", command: "rm -rf /" } })).rejects.toThrow(/403|insufficient|read-only/i);
      const res = await rawPost(hub.url, tokens.readOnly.secret, { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "fs_write", arguments: {} } }, { "mcp-session-id": transport.sessionId! });
      expect(res.status).toBe(403);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer error="insufficient_scope"/);
      // Step-up: the challenge names the scope that would allow it and where to get it.
      expect(res.headers.get("www-authenticate")).toContain(`scope="mcp:read mcp:write"`);
      expect(res.headers.get("www-authenticate")).toContain(`resource_metadata="${hub.url}/.well-known/oauth-protected-resource"`);
      expect(await res.json()).toMatchObject({ error: { data: { code: "FORBIDDEN" } } });
      await client.close();
    });

    it("a tool-scoped token lists only its tools and is refused the others by name", async () => {
      const { client, transport } = await connectClient(hub.url, tokens.healthOnly.secret);
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["health"]);
      expect((await client.callTool({ name: "health", arguments: {} })).isError ?? false).toBe(false);
      const res = await rawPost(hub.url, tokens.healthOnly.secret, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "audit_checkpoint", arguments: {} } }, { "mcp-session-id": transport.sessionId! });
      expect(res.status).toBe(403);
      await client.close();
    });

    it("401 with WWW-Authenticate resource_metadata for missing, malformed, unknown, expired and revoked tokens", async () => {
      const metadataUrl = `${hub.url}/.well-known/oauth-protected-resource`;
      const missing = await rawPost(hub.url, undefined, INITIALIZE);
      expect(missing.status).toBe(401);
      expect(missing.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${metadataUrl}", scope="mcp:read mcp:write"`);
      for (const token of ["garbage", `lh_${"A".repeat(32)}`]) {
        const res = await rawPost(hub.url, token, INITIALIZE);
        expect(res.status).toBe(401);
        expect(res.headers.get("www-authenticate")).toContain(`resource_metadata="${metadataUrl}"`);
        expect(res.headers.get("www-authenticate")).toContain(`error="invalid_token"`);
      }
      const meta = await fetch(metadataUrl);
      expect(await meta.json()).toMatchObject({ resource: `${hub.url}/api/mcp`, bearer_methods_supported: ["header"], authorization_servers: [hub.url], scopes_supported: ["mcp:read", "mcp:write", "mcp:observe-any"] });
      expect((await fetch(`${hub.url}/.well-known/oauth-protected-resource/api/mcp`)).status).toBe(200);
      // The authorization server it names (RFC 8414), reachable where clients look for it.
      const as = await fetch(`${hub.url}/.well-known/oauth-authorization-server`);
      expect(as.status).toBe(200);
      expect(await as.json()).toMatchObject({
        issuer: hub.url,
        authorization_endpoint: `${hub.url}/oauth/authorize`,
        token_endpoint: `${hub.url}/api/oauth/token`,
        registration_endpoint: `${hub.url}/api/oauth/register`,
        code_challenge_methods_supported: ["S256"],
        client_id_metadata_document_supported: true,
      });
      // An OAuth-shaped token nobody issued is refused like any unknown token.
      const forged = await rawPost(hub.url, `lha_${"A".repeat(32)}`, INITIALIZE);
      expect(forged.status).toBe(401);
      expect(forged.headers.get("www-authenticate")).toContain(`error="invalid_token"`);

      // Revocation is effective on the next request, also inside an open session.
      const { client } = await connectClient(hub.url, tokens.victim.secret);
      expect((await client.callTool({ name: "health", arguments: {} })).isError ?? false).toBe(false);
      const revoked = await runCli(["token", "revoke", tokens.victim.id], cliEnv(address));
      expect(revoked.code).toBe(0);
      await expect(client.callTool({ name: "health", arguments: {} })).rejects.toThrow();
      const after = await rawPost(hub.url, tokens.victim.secret, INITIALIZE);
      expect(after.status).toBe(401);
      expect(after.headers.get("www-authenticate")).toContain("revoked");

      await sleep(Math.max(0, shortExpiresAt - Date.now() + 300));
      const expired = await rawPost(hub.url, tokens.short.secret, INITIALIZE);
      expect(expired.status).toBe(401);
      expect(expired.headers.get("www-authenticate")).toContain("expired");
      const list = await runCli(["token", "list"], cliEnv(address));
      expect(list.stdout).toMatch(new RegExp(`${tokens.victim.id}\\s+revoked`));
      expect(list.stdout).toMatch(new RegExp(`${tokens.short.id}\\s+expired`));
      expect(list.stdout).not.toContain("lh_");
    });

    it("Origin: missing or allowed passes; null, malformed or foreign gets 403", async () => {
      expect((await rawPost(hub.url, tokens.full.secret, INITIALIZE)).status).toBe(200);
      expect((await rawPost(hub.url, tokens.full.secret, INITIALIZE, { origin: hub.url })).status).toBe(200);
      for (const origin of ["null", "http://evil.example", `${hub.url}/x`, "not a url", hub.url.replace("127.0.0.1", "localhost")]) {
        const res = await rawPost(hub.url, tokens.full.secret, INITIALIZE, { origin });
        expect(res.status, origin).toBe(403);
        expect(await res.json()).toMatchObject({ error: { data: { code: "FORBIDDEN" } } });
      }
    });

    it("sessions: another token gets 404, an idle session expires (404), DELETE ends it, GET opens a stream", async () => {
      const { client, transport } = await connectClient(hub.url, tokens.full.secret);
      const sessionId = transport.sessionId!;
      const ping = { jsonrpc: "2.0", id: 5, method: "tools/list" };
      const withOther = await rawPost(hub.url, tokens.other.secret, ping, { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" });
      expect(withOther.status).toBe(404);
      expect((await rawPost(hub.url, tokens.full.secret, ping, { "mcp-session-id": "A".repeat(43) })).status).toBe(404);
      expect((await rawPost(hub.url, tokens.full.secret, ping)).status).toBe(400);

      // The SDK client already holds this session's one GET stream (a second gets 409): open one on a raw session.
      expect((await fetch(`${hub.url}/api/mcp`, { headers: { authorization: `Bearer ${tokens.full.secret}`, accept: "text/event-stream", "mcp-session-id": sessionId } })).status).toBe(409);
      const raw = await rawPost(hub.url, tokens.full.secret, INITIALIZE);
      const rawId = raw.headers.get("mcp-session-id")!;
      await raw.arrayBuffer();
      const stream = await fetch(`${hub.url}/api/mcp`, { headers: { authorization: `Bearer ${tokens.full.secret}`, accept: "text/event-stream", "mcp-session-id": rawId } });
      expect(stream.status).toBe(200);
      expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const first = await stream.body!.getReader().read();
      expect(new TextDecoder().decode(first.value)).toMatch(/^: /);
      await stream.body?.cancel().catch(() => undefined);

      await transport.terminateSession();
      expect((await rawPost(hub.url, tokens.full.secret, ping, { "mcp-session-id": sessionId })).status).toBe(404);
      await client.close();

      const idle = await connectClient(hub.url, tokens.full.secret);
      const idleId = idle.transport.sessionId!;
      await sleep(3500);
      expect((await rawPost(hub.url, tokens.full.secret, ping, { "mcp-session-id": idleId })).status).toBe(404);
      await idle.client.close();
    });

    it("limits: body size (413), JSON depth (400), header size (431), each a JSON-RPC error", async () => {
      const big = await rawPost(hub.url, tokens.full.secret, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { s: "x".repeat(4 * 1024 * 1024) } }));
      expect(big.status).toBe(413);
      expect(await big.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
      const deep = await rawPost(hub.url, tokens.full.secret, "[".repeat(100) + "]".repeat(100));
      expect(deep.status).toBe(400);
      expect(await deep.json()).toMatchObject({ error: { message: expect.stringContaining("nested") } });
      const headers = await rawPost(hub.url, tokens.full.secret, INITIALIZE, { "x-pad": "p".repeat(9000) });
      expect(headers.status).toBe(431);
      expect(await headers.json()).toMatchObject({ error: { data: { code: "INVALID_ARGUMENT" } } });
    });

    if (kind === "postgres") {
      it("a session opened on one hub process continues on a second one sharing the server; per-token stream and rate limits answer 429; at the session cap the least recently used idle session is closed on every process", async () => {
        const { client, transport } = await connectClient(hub.url, tokens.full.secret);
        expect((await client.callTool({ name: "health", arguments: {} })).isError ?? false).toBe(false);
        const moved = await connectClient(second!.url, tokens.full.secret, { sessionId: transport.sessionId! });
        expect(moved.transport.sessionId).toBe(transport.sessionId);
        expect((await moved.client.listTools()).tools).toHaveLength(FULL_TOOLS.length);
        const health = await moved.client.callTool({ name: "health", arguments: {} });
        expect(health.structuredContent).toMatchObject({ status: expect.any(String), database: { kind: "postgres" } });
        // Ending it on the second process ends it everywhere.
        await moved.transport.terminateSession();
        expect((await rawPost(hub.url, tokens.full.secret, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { "mcp-session-id": transport.sessionId! })).status).toBe(404);
        await client.close();

        // Streams per token (this hub allows 1): a second open GET stream of the same token gets 429.
        const openStream = async () => {
          const init = await rawPost(second!.url, tokens.other.secret, INITIALIZE);
          const id = init.headers.get("mcp-session-id")!;
          await init.arrayBuffer();
          return fetch(`${second!.url}/api/mcp`, { headers: { authorization: `Bearer ${tokens.other.secret}`, accept: "text/event-stream", "mcp-session-id": id } });
        };
        const firstStream = await openStream();
        expect(firstStream.status).toBe(200);
        const secondStream = await openStream();
        expect(secondStream.status).toBe(429);
        expect(await secondStream.json()).toMatchObject({ error: { data: { code: "RATE_LIMITED", retryable: true } } });
        await firstStream.body?.cancel();

        // Sessions per token (this hub allows 2; the count is in PostgreSQL, so it holds across processes).
        const opened: string[] = [];
        for (let i = 0; i < 2; i++) {
          const init = await rawPost(second!.url, tokens.capped.secret, INITIALIZE);
          expect(init.status).toBe(200);
          opened.push(init.headers.get("mcp-session-id")!);
          await init.arrayBuffer();
        }
        // At the cap a new session closes the least recently used idle one (opened[0]), on every process.
        const third = await rawPost(second!.url, tokens.capped.secret, INITIALIZE);
        expect(third.status).toBe(200);
        await third.arrayBuffer();
        const ping = (on: string, id: string) => rawPost(on, tokens.capped.secret, { jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": id });
        expect((await ping(second!.url, opened[0]!)).status).toBe(404);
        expect((await ping(hub.url, opened[0]!)).status).toBe(404);
        expect((await ping(second!.url, opened[1]!)).status).toBe(200);

        const statuses: number[] = [];
        let retryAfter: string | null = null;
        for (let i = 0; i < 30; i++) {
          const res = await rawPost(second!.url, tokens.other.secret, { jsonrpc: "2.0", id: 1, method: "tools/list" });
          statuses.push(res.status);
          if (res.status === 429) retryAfter = res.headers.get("retry-after");
          await res.arrayBuffer();
        }
        expect(statuses).toContain(429);
        expect(Number(retryAfter)).toBeGreaterThan(0);
      });
    }

    it(`hostile fuzz: ${FUZZ_REQUESTS} generated requests, 0 5xx, 0 successes without a valid token, hub still healthy`, async () => {
      // Refused tokens of its own (one revoked here, one past its expiry), whatever order the other cases ran in.
      const [revoked, expiring] = await Promise.all([
        createTokenViaCli(address, ["--name", "fuzz revoked", "--expires", "1d"]),
        createTokenViaCli(address, ["--name", "fuzz expired", "--expires", "1s"]),
      ]);
      expect((await runCli(["token", "revoke", revoked.id], cliEnv(address))).code).toBe(0);
      for (const secret of [revoked.secret, expiring.secret]) {
        const deadline = Date.now() + 30_000;
        while ((await rawPost(hub.url, secret, INITIALIZE)).status !== 401) {
          if (Date.now() > deadline) throw new Error("a revoked or expired token was still accepted after 30 s");
          await sleep(200);
        }
      }
      const { client, transport } = await connectClient(hub.url, tokens.full.secret);
      const counts = await runFuzz(
        { url: hub.url, validToken: tokens.full.secret, refusedTokens: [revoked.secret, expiring.secret], sessionId: transport.sessionId!, allowedOrigin: hub.url },
        { count: FUZZ_REQUESTS, concurrency: 16, seed: kind === "pglite" ? 1 : 2 },
      );
      console.log(`fuzz [${kind}]: ${JSON.stringify(counts)}`);
      expect(counts.samples).toEqual([]);
      expect(counts.serverErrors).toBe(0);
      expect(counts.unauthenticatedSuccesses).toBe(0);
      expect(counts.requests).toBe(FUZZ_REQUESTS);
      expect(hub.process.exitCode).toBeNull();
      expect((await fetch(`${hub.url}/api/health`)).status).toBe(200);
      await client.close();
    }, 120_000);

    it("mcp-config prints a claude mcp add line and a JSON block a client can use to list the tools", async () => {
      const result = await runCli(["mcp-config", "--create", "desktop", "--read-only", "--expires", "1d"], cliEnv(address));
      expect(result.code).toBe(0);
      const line = result.stdout.split("\n").find((l) => l.startsWith("claude mcp add"));
      expect(line).toMatch(new RegExp(`^claude mcp add --transport http leasehold ${hub.url}/api/mcp --header "Authorization: Bearer lh_[A-Za-z0-9_-]{32}"$`));
      // The static-token JSON block runs from the line after its heading to the first blank line.
      const afterHeading = result.stdout.slice(result.stdout.indexOf("# Clients that take a JSON block (mcpServers):\n") + "# Clients that take a JSON block (mcpServers):\n".length);
      const json = JSON.parse(afterHeading.slice(0, afterHeading.indexOf("\n\n"))) as { mcpServers: { leasehold: { type: string; url: string; headers: { Authorization: string } } } };
      const server = json.mcpServers.leasehold;
      expect(server.type).toBe("http");
      const { client } = await connectClient(server.url.replace(/\/api\/mcp$/, ""), server.headers.Authorization.replace(/^Bearer /, ""));
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(READ_ONLY_TOOLS);
      await client.close();
      const again = await runCli(["mcp-config"], { ...cliEnv(address), MCP_TOKEN: tokens.full.secret });
      expect(again.code).toBe(0);
      expect(again.stdout).toContain(`Bearer ${tokens.full.secret}`);
      // Next to the token's settings, and alone with --oauth (no token): the URL without a header,
      // which answers a client with no token by pointing it at the hub's protected-resource metadata.
      const oauth = await runCli(["mcp-config", "--oauth"], cliEnv(address));
      expect(oauth.code, oauth.stderr).toBe(0);
      expect(again.stdout).toContain(oauth.stdout);
      expect(oauth.stdout).not.toMatch(/Bearer|lh_/);
      expect(oauth.stdout).toContain(`claude mcp add --transport http leasehold ${hub.url}/api/mcp\n`);
      const oauthUrl = (JSON.parse(oauth.stdout.slice(oauth.stdout.indexOf("{"), oauth.stdout.lastIndexOf("}") + 1)) as { mcpServers: { leasehold: { url: string } } }).mcpServers.leasehold.url;
      const challenge = await fetch(oauthUrl, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{}" });
      expect(challenge.status).toBe(401);
      expect(challenge.headers.get("www-authenticate")).toContain(`resource_metadata="${hub.url}/.well-known/oauth-protected-resource`);
      // A token this hub never issued (independent of which tokens other cases revoke).
      const refused = await runCli(["mcp-config"], { ...cliEnv(address), MCP_TOKEN: `lh_${"Q".repeat(32)}` });
      expect(refused.code).not.toBe(0);
      // Never in argv: --token is refused with how to pass it now, and nothing is printed.
      const argv = await runCli(["mcp-config", "--token", tokens.full.secret], cliEnv(address));
      expect(argv.code).toBe(2);
      expect(argv.stderr).toContain("--token is refused: a token on the command line is readable by every local user (/proc/PID/cmdline); pass it in MCP_TOKEN");
      expect(argv.stdout).not.toContain(tokens.full.secret);
      expect((await runCli(["token", "create", "--name", "x"], cliEnv(address))).stderr).toContain("--expires is required");
    });
  });
}
