import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import type { CliOutput } from "../cli/context";

/**
 * The hub's local control channel: a Unix socket in the data directory that
 * lets `leasehold <command>` run inside the running hub when the hub holds
 * the database (PGlite allows one process). Authentication is the file
 * system: the data directory is 0700 and the socket 0600, so only the
 * account that owns the hub's data can connect — the same account that
 * could read its database files anyway.
 */
export const CONTROL_SOCKET_NAME = "control.sock";
const MAX_REQUEST_BYTES = 64 * 1024;
// sun_path is 108 bytes including the terminating NUL.
const MAX_SOCKET_PATH = 107;

export interface ControlRequest {
  argv: string[];
  env: Record<string, string>;
  /** The caller's working directory, so relative paths mean what they typed. */
  cwd: string;
}

export type ControlRunner = (request: ControlRequest, output: CliOutput) => Promise<number>;

export function controlSocketPath(dataDir: string): string {
  return path.join(dataDir, CONTROL_SOCKET_NAME);
}

export async function listenControlSocket(
  dataDir: string,
  run: ControlRunner,
): Promise<{ path: string; close(): Promise<void> } | { unavailable: string }> {
  const socketPath = controlSocketPath(dataDir);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    return { unavailable: `data directory path too long for a control socket (${socketPath})` };
  }
  // We hold the data directory lock, so a socket file left here is stale.
  fs.rmSync(socketPath, { force: true });
  const server = net.createServer((socket) => handleConnection(socket, run));
  const oldMask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => resolve());
    });
  } finally {
    process.umask(oldMask);
  }
  fs.chmodSync(socketPath, 0o600);
  server.unref();
  return {
    path: socketPath,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        fs.rmSync(socketPath, { force: true });
      }),
  };
}

function handleConnection(socket: net.Socket, run: ControlRunner): void {
  let buffer = "";
  let started = false;
  const send = (message: Record<string, unknown>) => {
    if (!socket.destroyed) socket.write(`${JSON.stringify(message)}\n`);
  };
  socket.setEncoding("utf8");
  socket.on("error", () => socket.destroy());
  socket.on("data", (chunk: string) => {
    if (started) return;
    buffer += chunk;
    if (buffer.length > MAX_REQUEST_BYTES) {
      send({ err: "leasehold: control request too large", exit: 2 });
      socket.end();
      return;
    }
    const newline = buffer.indexOf("\n");
    if (newline < 0) return;
    started = true;
    const request = parseRequest(buffer.slice(0, newline));
    if (!request) {
      send({ err: "leasehold: malformed control request", exit: 2 });
      socket.end();
      return;
    }
    run(request, { out: (line) => send({ out: line }), err: (line) => send({ err: line }) })
      .then((code) => send({ exit: code }))
      .catch((error: unknown) => send({ err: `leasehold: ${error instanceof Error ? error.message : String(error)}`, exit: 1 }))
      .finally(() => socket.end());
  });
}

function parseRequest(text: string): ControlRequest | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== "object" || value === null) return undefined;
    const { argv, env, cwd } = value as { argv?: unknown; env?: unknown; cwd?: unknown };
    if (typeof cwd !== "string" || !cwd.startsWith("/")) return undefined;
    if (!Array.isArray(argv) || !argv.every((a) => typeof a === "string") || argv.length > 256) return undefined;
    if (typeof env !== "object" || env === null || Array.isArray(env)) return undefined;
    const cleanEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries(env)) {
      if (typeof v !== "string") return undefined;
      cleanEnv[k] = v;
    }
    return { argv: argv as string[], env: cleanEnv, cwd };
  } catch {
    return undefined;
  }
}

/** Client side: runs argv in the hub; resolves with the exit code. */
export function runInHub(dataDir: string, request: ControlRequest, output: CliOutput): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(controlSocketPath(dataDir));
    let buffer = "";
    let exit: number | undefined;
    socket.setEncoding("utf8");
    socket.on("connect", () => socket.write(`${JSON.stringify(request)}\n`));
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      let newline: number;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        try {
          const message = JSON.parse(line) as { out?: string; err?: string; exit?: number };
          if (typeof message.out === "string") output.out(message.out);
          if (typeof message.err === "string") output.err(message.err);
          if (typeof message.exit === "number") exit = message.exit;
        } catch {
          output.err("leasehold: unreadable answer from the hub's control socket");
        }
      }
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(exit ?? 1));
  });
}
