import { createHash } from "node:crypto";
import net from "node:net";
import { LeaseholdError } from "../errors";

/**
 * An exclusive, process-lifetime lock on a data directory.
 *
 * Why an abstract Unix socket and not a lock file: the kernel releases the
 * name the moment the holder dies (SIGKILL included), so there is never a
 * stale lock to judge by PID, and binding is atomic. Abstract names are per
 * network namespace; processes sharing a data directory share one here.
 * Acquiring writes nothing to disk, so a refused start changes nothing.
 */
export interface DataDirLock {
  readonly key: string;
  release(): Promise<void>;
}

export function lockKeyFor(canonicalDir: string): string {
  return `leasehold-datadir-${createHash("sha256").update(canonicalDir).digest("hex").slice(0, 40)}`;
}

export async function acquireDataDirLock(canonicalDir: string, what: string): Promise<DataDirLock> {
  const key = lockKeyFor(canonicalDir);
  const server = net.createServer((socket) => {
    // A second process asks who holds the lock: answer and hang up.
    socket.end(JSON.stringify({ pid: process.pid, what }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ path: `\0${key}` }, () => {
      server.off("error", reject);
      resolve();
    });
  }).catch(async (error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
      const holder = await askHolder(key);
      throw new LeaseholdError(
        "DATA_DIR_LOCKED",
        `data directory ${canonicalDir} is in use by another Leasehold process${holder ? ` (pid ${holder.pid}, ${holder.what})` : ""}; stop it first or set LEASEHOLD_DATA_DIR to another directory`,
        { tier: "database" },
      );
    }
    throw error;
  });
  server.unref();
  return {
    key,
    release: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Who holds the lock on `canonicalDir`, asked without taking it (a connect
 * to the holder's socket): undefined when nobody does or the holder does
 * not answer.
 */
export function dataDirHolder(canonicalDir: string): Promise<{ pid: number; what: string } | undefined> {
  return askHolder(lockKeyFor(canonicalDir));
}

async function askHolder(key: string): Promise<{ pid: number; what: string } | undefined> {
  return new Promise((resolve) => {
    const socket = net.connect({ path: `\0${key}` });
    let data = "";
    const done = (value: { pid: number; what: string } | undefined) => {
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(1000, () => done(undefined));
    socket.on("data", (chunk) => (data += chunk.toString("utf8")));
    socket.on("error", () => done(undefined));
    socket.on("end", () => {
      try {
        const parsed = JSON.parse(data) as { pid?: unknown; what?: unknown };
        done(typeof parsed.pid === "number" ? { pid: parsed.pid, what: String(parsed.what ?? "") } : undefined);
      } catch {
        done(undefined);
      }
    });
  });
}
