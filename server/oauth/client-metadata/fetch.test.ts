/**
 * The metadata document fetch against real HTTPS servers on loopback, with a
 * throwaway CA made by openssl for this run. The only stand-in is the
 * injectable `lookup`, which makes a name under .test (a TLD that never
 * resolves, RFC 6761) answer with whatever address a case needs.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { type ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import { type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchClientMetadataDocument, maxAgeFromCacheControl, type FetchOptions, type ResolvedAddress } from "./fetch";

const NAME = "metadata.cimd.test";

let dir: string;
let ca: string;
let serverKey: Buffer;
let serverCert: Buffer;
let otherCa: string;
let server: Server;
let port: number;
const sniSeen: (string | false)[] = [];
const pathsSeen: string[] = [];
let tcpConnections = 0;

function openssl(...args: string[]): void {
  execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
}

function makeCa(name: string): void {
  openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", `${name}.key`, "-out", `${name}.pem`, "-days", "1", "-subj", `/CN=Leasehold throwaway ${name}`, "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign");
}

function document(host: string | undefined, path: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { client_id: `https://${host}${path}`, client_name: "Example Agent", redirect_uris: ["http://127.0.0.1/callback", "https://agent.example.com/cb"], token_endpoint_auth_method: "none", ...extra };
}

function json(res: ServerResponse, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "leasehold-cimd-"));
  makeCa("ca");
  makeCa("other-ca");
  openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=cimd test server");
  writeFileSync(join(dir, "ext.cnf"), `subjectAltName=DNS:localhost,DNS:${NAME},IP:127.0.0.1,IP:::1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
  openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "1", "-extfile", "ext.cnf");
  ca = readFileSync(join(dir, "ca.pem"), "utf8");
  otherCa = readFileSync(join(dir, "other-ca.pem"), "utf8");

  serverKey = readFileSync(join(dir, "server.key"));
  serverCert = readFileSync(join(dir, "server.pem"));
  server = createServer({ key: serverKey, cert: serverCert }, (req, res) => {
    const host = req.headers.host;
    const url = new URL(req.url ?? "/", "https://x");
    const path = url.pathname;
    pathsSeen.push(path);
    switch (path) {
      case "/client.json":
        return json(res, document(host, req.url ?? ""), { "cache-control": "public, max-age=600" });
      case "/plain-name.json":
        return json(res, { client_id: `https://${host}${path}`, redirect_uris: ["https://agent.example.com/cb"] });
      case "/cache-control.json":
        return json(res, document(host, req.url ?? ""), url.searchParams.has("v") ? { "cache-control": url.searchParams.get("v") as string } : {});
      case "/charset.json": {
        const text = JSON.stringify(document(host, path));
        res.writeHead(200, { "content-type": "Application/JSON; charset=utf-8" });
        return res.end(text);
      }
      case "/redirect-to-loopback":
        res.writeHead(302, { location: `https://127.0.0.1:${port}/client.json` });
        return res.end();
      case "/moved":
        res.writeHead(301, { location: `https://${host}/client.json` });
        return res.end();
      case "/missing.json":
        res.writeHead(404, { "content-type": "application/json" });
        return res.end("{}");
      case "/text.json": {
        const text = JSON.stringify(document(host, path));
        res.writeHead(200, { "content-type": "text/plain" });
        return res.end(text);
      }
      case "/gzip.json": {
        const body = gzipSync(JSON.stringify(document(host, path)));
        res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": String(body.length) });
        return res.end(body);
      }
      case "/big-declared.json":
        return json(res, document(host, path, { padding: "x".repeat(6000) }));
      case "/big-chunked.json": {
        // No Content-Length: the size is only known by counting.
        res.writeHead(200, { "content-type": "application/json" });
        const text = JSON.stringify(document(host, path, { padding: "x".repeat(6000) }));
        for (let i = 0; i < text.length; i += 500) res.write(text.slice(i, i + 500));
        return res.end();
      }
      case "/trickle.json": {
        // A valid document sent one byte every 100 ms: only a deadline that
        // covers the body stops it before it completes (~20 s).
        const text = JSON.stringify(document(host, path));
        res.writeHead(200, { "content-type": "application/json" });
        let i = 0;
        const timer = setInterval(() => {
          if (res.destroyed) return clearInterval(timer);
          res.write(text.slice(i, i + 1));
          if (++i >= text.length) {
            clearInterval(timer);
            res.end();
          }
        }, 100);
        res.on("close", () => clearInterval(timer));
        return;
      }
      case "/silent.json":
        // Accepts the request and never answers.
        return;
      case "/mismatch-slash.json":
        return json(res, { ...document(host, path), client_id: `https://${host}${path}/` });
      case "/mismatch-case.json":
        return json(res, { ...document(host, path), client_id: `https://${(host ?? "").toUpperCase()}${path}` });
      case "/no-client-id.json": {
        const { client_id: _dropped, ...rest } = document(host, path);
        return json(res, rest);
      }
      case "/secret.json":
        return json(res, document(host, path, { client_secret: "hunter2" }));
      case "/secret-expires.json":
        return json(res, document(host, path, { client_secret_expires_at: 0 }));
      case "/auth-basic.json":
        return json(res, document(host, path, { token_endpoint_auth_method: "client_secret_basic" }));
      case "/no-redirects.json":
        return json(res, document(host, path, { redirect_uris: [] }));
      case "/bad-redirect.json":
        return json(res, document(host, path, { redirect_uris: ["http://evil.example.com/cb"] }));
      case "/zero-width-name.json":
        return json(res, document(host, path, { client_name: "Claude\u200b Code" }));
      case "/not-json.json":
        res.writeHead(200, { "content-type": "application/json" });
        return res.end("{not json");
      case "/array.json":
        return json(res, [document(host, path)]);
      case "/latin1.json":
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]));
      default:
        res.writeHead(404);
        return res.end();
    }
  });
  server.on("connection", () => tcpConnections++);
  // `servername` is the SNI the client sent (false when none); @types/node omits it.
  server.on("secureConnection", (socket) => sniSeen.push((socket as typeof socket & { servername: string | false }).servername));
  return new Promise<void>((resolve) => server.listen({ host: "::", port: 0, ipv6Only: false }, () => {
    port = (server.address() as AddressInfo).port;
    resolve();
  }));
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** A resolver that answers `addresses` for every name and counts its calls. */
function resolver(addresses: ResolvedAddress[]): FetchOptions["lookup"] & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (host: string) => {
    calls.push(host);
    return addresses;
  };
  return Object.assign(lookup, { calls });
}

const loopback4: ResolvedAddress[] = [{ address: "127.0.0.1", family: 4 }];

function at(host: string, path: string): string {
  return `https://${host}:${port}${path}`;
}

/** Fetches `path` from the test server under the allow-listed name. */
function fetchAllowed(path: string, extra: Partial<FetchOptions> = {}) {
  return fetchClientMetadataDocument(at(NAME, path), { allowHosts: [NAME], lookup: resolver(loopback4), ca, ...extra });
}

function reasonOf(result: Awaited<ReturnType<typeof fetchClientMetadataDocument>>): string {
  expect(result.ok).toBe(false);
  return result.ok ? "" : result.reason;
}

describe("addresses are vetted before any connection", () => {
  it.each([
    ["127.0.0.1", 4, "loopback"],
    ["127.255.255.254", 4, "loopback"],
    ["10.1.2.3", 4, "private"],
    ["172.16.0.1", 4, "private"],
    ["172.31.255.255", 4, "private"],
    ["192.168.1.1", 4, "private"],
    ["169.254.169.254", 4, "link-local"],
    ["100.64.0.1", 4, "carrier-grade NAT"],
    ["0.0.0.0", 4, "unspecified"],
    ["0.1.2.3", 4, "unspecified"],
    ["224.0.0.1", 4, "multicast"],
    ["255.255.255.255", 4, "broadcast"],
    ["::1", 6, "loopback"],
    ["::", 6, "unspecified"],
    ["fd00::1", 6, "unique local"],
    ["fc12:3456::1", 6, "unique local"],
    ["fe80::1", 6, "link-local"],
    ["ff02::1", 6, "multicast"],
    ["::ffff:127.0.0.1", 6, "loopback"],
    ["::ffff:10.0.0.1", 6, "private"],
    ["::ffff:169.254.169.254", 6, "link-local"],
    ["::ffff:7f00:1", 6, "loopback"],
    ["64:ff9b::7f00:1", 6, "NAT64"],
    ["2002:7f00:1::1", 6, "6to4"],
  ] as const)("refuses a name resolving to %s (%s) without connecting", async (address, family, why) => {
    const lookup = resolver([{ address, family }]);
    const before = tcpConnections;
    const result = await fetchClientMetadataDocument(at(NAME, "/client.json"), { allowHosts: [], lookup, ca });
    expect(reasonOf(result)).toContain(why);
    expect(lookup.calls).toEqual([NAME]);
    expect(tcpConnections).toBe(before);
  });

  it("refuses a name whose answers mix a public and a loopback address", async () => {
    const lookup = resolver([{ address: "93.184.215.14", family: 4 }, { address: "127.0.0.1", family: 4 }]);
    const before = tcpConnections;
    expect(reasonOf(await fetchClientMetadataDocument(at(NAME, "/client.json"), { allowHosts: [], lookup, ca }))).toContain("127.0.0.1 is loopback");
    expect(tcpConnections).toBe(before);
  });

  it("refuses an answer that is not an IP address of the family it claims", async () => {
    const lookup = resolver([{ address: "127.0.0.1", family: 6 }]);
    expect(reasonOf(await fetchClientMetadataDocument(at(NAME, "/client.json"), { allowHosts: [NAME], lookup, ca }))).toContain("not an IPv6 address");
  });

  it.each(["127.0.0.1", "[::1]"])("refuses the IP literal %s in the URL without DNS or a connection", async (host) => {
    const lookup = resolver(loopback4);
    const before = tcpConnections;
    expect(reasonOf(await fetchClientMetadataDocument(at(host, "/client.json"), { allowHosts: [], lookup, ca }))).toContain("loopback");
    expect(lookup.calls).toEqual([]);
    expect(tcpConnections).toBe(before);
  });

  it("allow-listing one name does not allow another that resolves to loopback", async () => {
    const result = await fetchClientMetadataDocument(at("other.cimd.test", "/client.json"), { allowHosts: [NAME], lookup: resolver(loopback4), ca });
    expect(reasonOf(result)).toContain("127.0.0.1 is loopback");
  });
});

describe("allow-listed hosts", () => {
  it("fetches from the vetted address after exactly one lookup, sending the name as SNI and Host", async () => {
    // A second lookup would get a different answer (DNS rebinding); the
    // .test name itself resolves nowhere, so success proves the connection
    // went to the address vetted the first time.
    const calls: string[] = [];
    const lookup = async (host: string): Promise<ResolvedAddress[]> => {
      calls.push(host);
      return calls.length === 1 ? loopback4 : [{ address: "10.255.255.1", family: 4 }];
    };
    const sniBefore = sniSeen.length;
    const result = await fetchClientMetadataDocument(at(NAME, "/client.json"), { allowHosts: [NAME], lookup, ca });
    expect(result).toMatchObject({ ok: true, maxAgeS: 600, metadata: { clientId: at(NAME, "/client.json"), name: "Example Agent" } });
    expect(calls).toEqual([NAME]);
    expect(sniSeen.slice(sniBefore)).toEqual([NAME]);
  });

  it("matches allow-list entries case-insensitively and ignoring surrounding spaces", async () => {
    const result = await fetchClientMetadataDocument(at(NAME, "/client.json"), { allowHosts: [` ${NAME.toUpperCase()} `], lookup: resolver(loopback4), ca });
    expect(result.ok).toBe(true);
  });

  it.each([
    ["127.0.0.1", "127.0.0.1"],
    ["[::1]", "::1"],
    ["[::1]", "[::1]"],
  ])("fetches the allow-listed IP literal %s (allow-list entry %s), verifying the certificate's IP SAN, with no SNI", async (host, entry) => {
    const sniBefore = sniSeen.length;
    const result = await fetchClientMetadataDocument(at(host, "/client.json"), { allowHosts: [entry], ca });
    expect(result).toMatchObject({ ok: true, metadata: { clientId: at(host, "/client.json") } });
    // RFC 6066 allows only host names in SNI.
    expect(sniSeen.slice(sniBefore)).toEqual([false]);
  });

  it("fetches allow-listed localhost through the system resolver", async () => {
    const result = await fetchClientMetadataDocument(at("localhost", "/plain-name.json"), { allowHosts: ["localhost"], ca });
    expect(result).toMatchObject({ ok: true, metadata: { name: `localhost:${port}` } });
  });

  it("tries the next vetted address when one refuses the connection", async () => {
    // A second server on 127.0.0.1 only: the same port on ::1 refuses.
    const only4 = createServer({ key: serverKey, cert: serverCert }, (req, res) => json(res, document(req.headers.host, req.url ?? "")));
    await new Promise<void>((resolve) => only4.listen({ host: "127.0.0.1", port: 0 }, resolve));
    const p = (only4.address() as AddressInfo).port;
    try {
      const both = resolver([{ address: "::1", family: 6 }, { address: "127.0.0.1", family: 4 }]);
      expect(await fetchClientMetadataDocument(`https://${NAME}:${p}/client.json`, { allowHosts: [NAME], lookup: both, ca })).toMatchObject({ ok: true });
      const onlyRefusing = resolver([{ address: "::1", family: 6 }]);
      expect(reasonOf(await fetchClientMetadataDocument(`https://${NAME}:${p}/client.json`, { allowHosts: [NAME], lookup: onlyRefusing, ca }))).toContain("ECONNREFUSED");
    } finally {
      only4.closeAllConnections();
      await new Promise((resolve) => only4.close(resolve));
    }
  });

  it("refuses a certificate that is not valid for the host name, even for an allow-listed host", async () => {
    const result = await fetchClientMetadataDocument(at("wrong.cimd.test", "/client.json"), { allowHosts: ["wrong.cimd.test"], lookup: resolver(loopback4), ca });
    expect(reasonOf(result)).toContain("ERR_TLS_CERT_ALTNAME_INVALID");
  });

  it("refuses a certificate from a CA it does not trust", async () => {
    expect(reasonOf(await fetchAllowed("/client.json", { ca: otherCa }))).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|unable to verify/);
  });

  it("keeps verifying certificates when NODE_TLS_REJECT_UNAUTHORIZED=0 is set", async () => {
    const saved = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
    try {
      // No `ca`: Node's default roots, which do not hold the throwaway CA.
      expect(reasonOf(await fetchClientMetadataDocument(at(NAME, "/client.json"), { allowHosts: [NAME], lookup: resolver(loopback4) }))).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|unable to verify/);
    } finally {
      if (saved === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = saved;
    }
  });
});

describe("the HTTP answer", () => {
  it("does not follow a redirect to loopback, and names where it pointed", async () => {
    const seen = pathsSeen.length;
    const reason = reasonOf(await fetchAllowed("/redirect-to-loopback"));
    expect(reason).toContain("302");
    expect(reason).toContain(`https://127.0.0.1:${port}/client.json`);
    expect(pathsSeen.slice(seen)).toEqual(["/redirect-to-loopback"]);
  });

  it("does not follow a redirect even to the same allowed host", async () => {
    const seen = pathsSeen.length;
    expect(reasonOf(await fetchAllowed("/moved"))).toContain("301");
    expect(pathsSeen.slice(seen)).toEqual(["/moved"]);
  });

  it("refuses a status other than 200", async () => {
    expect(reasonOf(await fetchAllowed("/missing.json"))).toContain("HTTP 404");
  });

  it("refuses a content type other than application/json", async () => {
    expect(reasonOf(await fetchAllowed("/text.json"))).toContain('content-type "text/plain"');
  });

  it("accepts application/json with parameters, in any case", async () => {
    expect((await fetchAllowed("/charset.json")).ok).toBe(true);
  });

  it("refuses a compressed body", async () => {
    expect(reasonOf(await fetchAllowed("/gzip.json"))).toContain("content-encoding");
  });

  it("refuses a document declared larger than maxBytes", async () => {
    expect(reasonOf(await fetchAllowed("/big-declared.json"))).toMatch(/^.*is \d+ bytes, over the 5120-byte limit/);
  });

  it("stops reading an undeclared body at maxBytes", async () => {
    expect(reasonOf(await fetchAllowed("/big-chunked.json"))).toContain("over the 5120-byte limit");
  });

  it("accepts a document of exactly maxBytes and refuses one byte less", async () => {
    const body = JSON.stringify(document(`${NAME}:${port}`, "/client.json"));
    const size = Buffer.byteLength(body);
    expect((await fetchAllowed("/client.json", { maxBytes: size })).ok).toBe(true);
    expect(reasonOf(await fetchAllowed("/client.json", { maxBytes: size - 1 }))).toContain(`over the ${size - 1}-byte limit`);
  });

  it("gives up on a document trickled a byte at a time at the deadline, and closes the connection", async () => {
    expect(reasonOf(await fetchAllowed("/trickle.json", { timeoutMs: 700 }))).toContain("timed out after 700 ms");
    await expect.poll(() => new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n))), { timeout: 5000 }).toBe(0);
  });

  it("gives up on a server that never answers at the deadline", async () => {
    expect(reasonOf(await fetchAllowed("/silent.json", { timeoutMs: 500 }))).toContain("timed out after 500 ms");
  });

  it("counts DNS resolution against the deadline", async () => {
    const lookup = () => new Promise<ResolvedAddress[]>(() => {});
    expect(reasonOf(await fetchClientMetadataDocument(at(NAME, "/client.json"), { allowHosts: [NAME], lookup, ca, timeoutMs: 300 }))).toContain("timed out after 300 ms");
  });
});

describe("the document", () => {
  it("returns the metadata, the document as raw, and the Cache-Control lifetime", async () => {
    const clientId = at(NAME, "/client.json");
    const result = await fetchAllowed("/client.json");
    expect(result).toEqual({
      ok: true,
      maxAgeS: 600,
      metadata: {
        clientId,
        name: "Example Agent",
        redirectUris: ["http://127.0.0.1/callback", "https://agent.example.com/cb"],
        clientUri: null,
        logoUri: null,
        raw: document(`${NAME}:${port}`, "/client.json"),
      },
    });
  });

  it("names a client without client_name by the URL's host", async () => {
    expect(await fetchAllowed("/plain-name.json")).toMatchObject({ ok: true, metadata: { name: `${NAME}:${port}` } });
  });

  it.each([
    [undefined, 300],
    ["max-age=5", 60],
    ["max-age=999999", 86400],
    ["no-store", 60],
    ["public, max-age=7200", 7200],
  ])("caches for the clamped max-age (Cache-Control %s → %i s)", async (header, expected) => {
    const path = header === undefined ? "/cache-control.json" : `/cache-control.json?v=${encodeURIComponent(header)}`;
    expect(await fetchAllowed(path)).toMatchObject({ ok: true, maxAgeS: expected });
  });

  it.each([
    ["/mismatch-slash.json", "does not equal"],
    ["/mismatch-case.json", "does not equal"],
    ["/no-client-id.json", "missing or not a string"],
    ["/secret.json", "client_secret must not be present"],
    ["/secret-expires.json", "client_secret_expires_at must not be present"],
    ["/auth-basic.json", "token_endpoint_auth_method"],
    ["/no-redirects.json", "invalid_redirect_uri"],
    ["/bad-redirect.json", "loopback host"],
    ["/zero-width-name.json", "U+200B"],
    ["/not-json.json", "not valid JSON"],
    ["/array.json", "not a JSON object"],
    ["/latin1.json", "not valid UTF-8"],
  ])("refuses %s", async (path, why) => {
    expect(reasonOf(await fetchAllowed(path))).toContain(why);
  });
});

describe("client ids that are not metadata URLs are refused before DNS", () => {
  it.each([
    "http://metadata.cimd.test/client.json",
    "https://metadata.cimd.test/",
    "https://metadata.cimd.test",
    "https://metadata.cimd.test/client.json#frag",
    "https://user@metadata.cimd.test/client.json",
    "https://user:pw@metadata.cimd.test/client.json",
    "https://metadata.cimd.test/a/../client.json",
    "https://metadata.cimd.test/./client.json",
    "https://metadata.cimd.test/a/%2e%2e/client.json",
    "https://METADATA.cimd.test/client.json",
    "dyn_abc",
  ])("%s", async (clientId) => {
    const lookup = resolver(loopback4);
    expect(reasonOf(await fetchClientMetadataDocument(clientId, { allowHosts: [NAME], lookup, ca }))).toContain("not a metadata document URL");
    expect(lookup.calls).toEqual([]);
  });
});

describe("maxAgeFromCacheControl", () => {
  it("reads max-age, clamps it, and defaults to 300 s", () => {
    expect(maxAgeFromCacheControl(undefined)).toBe(300);
    expect(maxAgeFromCacheControl("public")).toBe(300);
    expect(maxAgeFromCacheControl("max-age=abc")).toBe(300);
    expect(maxAgeFromCacheControl("max-age=0")).toBe(60);
    expect(maxAgeFromCacheControl("Max-Age=120")).toBe(120);
    expect(maxAgeFromCacheControl('max-age="90"')).toBe(90);
    expect(maxAgeFromCacheControl("max-age=100000")).toBe(86400);
    expect(maxAgeFromCacheControl("max-age=600, no-cache")).toBe(60);
  });
});

describe("options", () => {
  it.each([
    ["a zero timeout", { allowHosts: [], timeoutMs: 0 }],
    ["a fractional maxBytes", { allowHosts: [], maxBytes: 1.5 }],
    ["allowHosts not an array", { allowHosts: "localhost" }],
  ])("throws INVALID_ARGUMENT for %s, before any lookup", async (_why, options) => {
    const lookup = resolver(loopback4);
    await expect(fetchClientMetadataDocument(at(NAME, "/client.json"), { ...(options as unknown as FetchOptions), lookup })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(lookup.calls).toEqual([]);
  });
});
