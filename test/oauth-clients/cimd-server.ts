/**
 * A Client ID Metadata Document served over real HTTPS on loopback, with a
 * throwaway certificate authority made by `openssl` for this run only.
 *
 * Why a CA of its own and not a self-signed leaf: the hub must verify the
 * certificate of every document it fetches (the contract), so the test hands
 * the hub this CA through `NODE_EXTRA_CA_CERTS` and nothing else changes —
 * no `NODE_TLS_REJECT_UNAUTHORIZED=0`, which would also hide a hub that
 * forgot to check certificates. The CA's key is deleted as soon as the leaf
 * is signed, so nothing else can ever be issued under it.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";

export interface ThrowawayCa {
  /** PEM of the CA certificate (what the hub trusts via NODE_EXTRA_CA_CERTS). */
  caCertPath: string;
  caCert: string;
  /** Leaf for `localhost` and 127.0.0.1, signed by the CA. */
  key: string;
  cert: string;
  dir: string;
}

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync("openssl", args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? "";
    throw new Error(`openssl ${args[0]} failed (is openssl installed?): ${stderr || String(error)}`, { cause: error });
  }
}

/** A new CA and a leaf certificate for `localhost` / 127.0.0.1 (valid 1 day). */
export function makeThrowawayCa(): ThrowawayCa {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lh-oauth-ca-"));
  openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=Leasehold e2e throwaway CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"], dir);
  openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=localhost"], dir);
  fs.writeFileSync(path.join(dir, "leaf.ext"), "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n");
  openssl(["x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "leaf.pem", "-days", "1", "-extfile", "leaf.ext"], dir);
  fs.rmSync(path.join(dir, "ca.key"));
  return {
    dir,
    caCertPath: path.join(dir, "ca.pem"),
    caCert: fs.readFileSync(path.join(dir, "ca.pem"), "utf8"),
    key: fs.readFileSync(path.join(dir, "leaf.key"), "utf8"),
    cert: fs.readFileSync(path.join(dir, "leaf.pem"), "utf8"),
  };
}

export interface CimdServer {
  /** https://localhost:PORT */
  origin: string;
  /** Sets the document served at `path` (the client id is `origin + path`). */
  publish(documentPath: string, document: Record<string, unknown>): string;
  /** Every request this server answered, oldest first ("GET /path -> 200 (user-agent)"). */
  log: string[];
  close(): Promise<void>;
}

/** Serves Client ID Metadata Documents as `application/json` over HTTPS on loopback (127.0.0.1 and ::1). */
export async function startCimdServer(ca: ThrowawayCa): Promise<CimdServer> {
  const documents = new Map<string, string>();
  const log: string[] = [];
  const server = https.createServer({ key: ca.key, cert: ca.cert }, (req, res) => {
    const body = req.method === "GET" ? documents.get(req.url ?? "") : undefined;
    const status = body === undefined ? 404 : 200;
    log.push(`${req.method} ${req.url} -> ${status} (${req.headers["user-agent"] ?? "no user-agent"})`);
    if (body === undefined) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=60" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  // `localhost` may resolve to ::1 first; whichever vetted address the hub connects to must answer.
  // Same handler, same port on ::1 when this machine has IPv6 loopback at all.
  const v6 = https.createServer({ key: ca.key, cert: ca.cert }, (req, res) => server.emit("request", req, res));
  const v6Up = await new Promise<boolean>((resolve) => {
    v6.once("error", () => resolve(false));
    v6.listen(port, "::1", () => resolve(true));
  });
  const origin = `https://localhost:${port}`;
  return {
    origin,
    log,
    publish(documentPath, document) {
      documents.set(documentPath, JSON.stringify(document));
      return `${origin}${documentPath}`;
    },
    async close() {
      for (const s of v6Up ? [server, v6] : [server]) {
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    },
  };
}
