/**
 * The e2e OAuth harness itself (e2e/oauth-clients.spec.ts leans on it):
 * the CIMD server's certificate verifies only against the throwaway CA, the
 * pinned Python SDK installs and imports, the loopback callback hands over
 * the query, and the transcript never prints a credential whole.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import { afterAll, describe, expect, it } from "vitest";
import { makeThrowawayCa, startCimdServer, type CimdServer } from "./cimd-server";
import { ensurePythonMcpVenv, MCP_PYTHON_VERSION } from "./python-venv";
import { startLoopbackCallback, transcriptFetch } from "./ts-provider";

function get(url: string, ca: string | undefined): Promise<{ status: number; type: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    https
      .get(url, ca === undefined ? {} : { ca }, (res) => {
        let body = "";
        res.on("data", (d: Buffer) => (body += d.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, type: res.headers["content-type"], body }));
      })
      .on("error", reject);
  });
}

describe("OAuth e2e harness", () => {
  const ca = makeThrowawayCa();
  let server: CimdServer | undefined;
  afterAll(async () => {
    await server?.close();
    fs.rmSync(ca.dir, { recursive: true, force: true });
  });

  it("serves a client metadata document over HTTPS that verifies with the throwaway CA only (whose key is gone)", async () => {
    server = await startCimdServer(ca);
    const url = server.publish("/client.json", { client_id: `${server.origin}/client.json`, redirect_uris: ["http://127.0.0.1/cb"] });
    const ok = await get(url, ca.caCert);
    expect(ok.status).toBe(200);
    expect(ok.type).toBe("application/json");
    expect(JSON.parse(ok.body)).toMatchObject({ client_id: url });
    await expect(get(url, undefined)).rejects.toThrow(/self[- ]signed|unable to (get|verify)/i);
    expect(fs.existsSync(`${ca.dir}/ca.key`)).toBe(false);
    expect((await get(`${server.origin}/other.json`, ca.caCert)).status).toBe(404);
    expect(server.log).toContain(`GET /client.json -> 200 (no user-agent)`);
  });

  it(`installs mcp==${MCP_PYTHON_VERSION} into a private venv that imports its OAuth client`, () => {
    const venv = ensurePythonMcpVenv();
    expect(fs.statSync(venv.dir).mode & 0o022).toBe(0);
    const r = spawnSync(venv.python, ["-c", "import importlib.metadata as m, mcp.client.auth as a; print(m.version('mcp'), a.OAuthClientProvider.__name__)"], { encoding: "utf8" });
    expect(r.stdout.trim(), r.stderr).toBe(`${MCP_PYTHON_VERSION} OAuthClientProvider`);
  }, 900_000);

  it("the loopback callback hands the authorization response's query to the waiting client", async () => {
    const callback = await startLoopbackCallback();
    try {
      const next = callback.next();
      const res = await fetch(`${callback.redirectUri}?code=abc&state=xyz&iss=http%3A%2F%2Fhub`);
      expect(res.status).toBe(200);
      const params = await next;
      expect(Object.fromEntries(params)).toEqual({ code: "abc", state: "xyz", iss: "http://hub" });
      expect((await fetch(callback.redirectUri.replace("/callback", "/elsewhere"))).status).toBe(404);
    } finally {
      await callback.close();
    }
  });

  it("the transcript shows a token request's and response's credentials by kind and length only", async () => {
    const log: string[] = [];
    const access = `lha_${"A".repeat(32)}`;
    const refresh = `lhr_${"B".repeat(43)}`;
    const verifier = "v".repeat(43);
    const fake = async () => new Response(JSON.stringify({ access_token: access, refresh_token: refresh, token_type: "Bearer", expires_in: 900 }), { status: 200, headers: { "content-type": "application/json" } });
    const logged = transcriptFetch(log, fake);
    await logged("http://127.0.0.1:1/api/oauth/token", { method: "POST", body: new URLSearchParams({ grant_type: "authorization_code", code: "secret-code", code_verifier: verifier, client_id: "dyn_x", resource: "http://127.0.0.1:1/api/mcp" }) });
    const text = log.join("\n");
    for (const secret of [access, refresh, verifier, "secret-code"]) expect(text).not.toContain(secret);
    expect(log[0]).toBe("POST /api/oauth/token  grant_type=authorization_code resource=http://127.0.0.1:1/api/mcp client_id=dyn_x code_verifier=vvvv…(43 chars)");
    expect(log[1]).toBe('-> 200  {"access_token":"lha_…(36 chars)","refresh_token":"lhr_…(47 chars)","token_type":"Bearer","expires_in":900}');
  });
});
