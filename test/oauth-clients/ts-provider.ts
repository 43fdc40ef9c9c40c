/**
 * What a TypeScript MCP client brings to the official SDK's OAuth support:
 * an `OAuthClientProvider` (here in memory, with a Client ID Metadata
 * Document URL as its client id), a loopback redirect URI to receive the
 * authorization response (RFC 8252 §7.3), and — for the test's transcript —
 * a `fetch` that writes one line per HTTP exchange without printing secrets.
 *
 * The SDK does the protocol (discovery, PKCE, the token request, refresh,
 * step-up); nothing here decides anything the hub is being tested on.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

export class MemoryOAuthClientProvider implements OAuthClientProvider {
  private info: OAuthClientInformationMixed | undefined;
  private saved: OAuthTokens | undefined;
  private verifier: string | undefined;
  /** Every authorization URL the SDK asked the user agent to open, oldest first. */
  readonly authorizationUrls: URL[] = [];
  /** Every state value handed to the SDK, oldest first (the test checks the redirect carries it back). */
  readonly states: string[] = [];

  constructor(
    private readonly options: { redirectUrl: string; clientMetadataUrl?: string; clientName: string },
  ) {}

  get redirectUrl(): string {
    return this.options.redirectUrl;
  }

  get clientMetadataUrl(): string | undefined {
    return this.options.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return { client_name: this.options.clientName, redirect_uris: [this.options.redirectUrl], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  }

  state(): string {
    const state = randomBytes(16).toString("base64url");
    this.states.push(state);
    return state;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.info;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.info = info;
  }

  tokens(): OAuthTokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }

  redirectToAuthorization(url: URL): void {
    // A desktop client would open the browser here; the test's browser is driven by Playwright.
    this.authorizationUrls.push(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error("no PKCE code verifier saved");
    return this.verifier;
  }
}

export interface LoopbackCallback {
  /** http://127.0.0.1:PORT/callback */
  redirectUri: string;
  /** The next authorization response's query parameters. */
  next(): Promise<URLSearchParams>;
  close(): Promise<void>;
}

/** A native app's loopback redirect listener (RFC 8252 §7.3): answers the browser and hands over the query. */
export async function startLoopbackCallback(): Promise<LoopbackCallback> {
  const waiting: ((params: URLSearchParams) => void)[] = [];
  const arrived: URLSearchParams[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname !== "/callback") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("Leasehold e2e: authorization received; this window may be closed.\n");
    const resolve = waiting.shift();
    if (resolve) resolve(url.searchParams);
    else arrived.push(url.searchParams);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    redirectUri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    next: () => {
      const ready = arrived.shift();
      return ready ? Promise.resolve(ready) : new Promise((resolve) => waiting.push(resolve));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `lha_…(36 chars)`: which kind of credential it is, never the credential. */
export function shape(secret: string): string {
  return `${secret.slice(0, 4)}…(${secret.length} chars)`;
}

function pick(body: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => k in body).map((k) => [k, body[k]]));
}

async function summary(path: string, res: Response): Promise<string> {
  if (!/\/\.well-known\/|\/api\/oauth\/(token|register)$/.test(path)) return "";
  const body = (await res.clone().json().catch(() => null)) as Record<string, unknown> | null;
  if (body === null || typeof body !== "object") return "";
  if (path.endsWith("/token")) return JSON.stringify(Object.fromEntries(Object.entries(body).map(([k, v]) => [k, /_token$/.test(k) && typeof v === "string" ? shape(v) : v])));
  if (path.endsWith("/register")) return JSON.stringify(pick(body, ["client_id", "client_name", "redirect_uris", "token_endpoint_auth_method"]));
  if (path.includes("oauth-protected-resource")) return JSON.stringify(pick(body, ["resource", "authorization_servers", "scopes_supported"]));
  return JSON.stringify(pick(body, ["issuer", "authorization_endpoint", "token_endpoint", "registration_endpoint", "code_challenge_methods_supported", "client_id_metadata_document_supported"]));
}

function describeRequest(url: URL, init: RequestInit | undefined): string {
  const method = init?.method ?? "GET";
  let line = `${method} ${url.pathname}`;
  const body = typeof init?.body === "string" ? init.body : init?.body instanceof URLSearchParams ? init.body.toString() : undefined;
  if (method === "POST" && url.pathname.endsWith("/api/mcp") && body !== undefined) {
    try {
      const message = JSON.parse(body) as { method?: string; params?: { name?: string } };
      line += `  [${message.method ?? "response"}${message.method === "tools/call" ? ` ${message.params?.name}` : ""}]`;
    } catch {
      // not one JSON-RPC message: the method and path are the line
    }
  }
  if (method === "POST" && url.pathname.endsWith("/token") && body !== undefined) {
    const form = new URLSearchParams(body);
    line += `  grant_type=${form.get("grant_type")} resource=${form.get("resource") ?? "-"} client_id=${form.get("client_id")}`;
    const verifier = form.get("code_verifier");
    if (verifier !== null) line += ` code_verifier=${shape(verifier)}`;
  }
  const auth = new Headers(init?.headers).get("authorization");
  if (auth !== null) line += `  (Authorization: Bearer ${shape(auth.replace(/^Bearer /, ""))})`;
  return line;
}

/** A fetch for the SDK that appends one transcript line per request and per response to `log`. */
export function transcriptFetch(log: string[], inner: FetchLike = fetch): FetchLike {
  return async (input, init) => {
    const url = new URL(String(input));
    log.push(describeRequest(url, init));
    const res = await inner(input, init);
    const www = res.headers.get("www-authenticate");
    const extra = await summary(url.pathname, res);
    log.push(`-> ${res.status}${www === null ? "" : `  WWW-Authenticate: ${www}`}${extra === "" ? "" : `  ${extra}`}`);
    return res;
  };
}
