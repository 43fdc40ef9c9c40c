// A guard the `postgres` driver (3.4.9) lacks, applied to the installed copy
// by `npm install` (postinstall) and by every build, checked by the hub when
// it opens a PostgreSQL database (server/db/driver-guard.ts).
//
// Why: when the server restarts, or a backend dies, while a connection has a
// write buffered or a transaction scope still issuing statements (the
// driver's own ROLLBACK after the failed statement), the driver writes to a
// connection whose socket it has already set to null. The write is deferred
// with setImmediate, so the TypeError it throws ("Cannot read properties of
// null (reading 'write')", in `nextWrite`) escapes every caller as an
// uncaught exception. And the teardown clears the deferred write's timer
// without forgetting it, so a connection that closed with a write pending
// never flushes again once reconnected: its queries hang for good, and after
// a few restarts every pooled connection is such a one.
//
// The guard, in the driver's connection.js (ESM and CommonJS copies):
// - a statement handed to a connection without a socket is rejected with the
//   driver's own CONNECTION_CLOSED error instead of being buffered, and the
//   connection stays where the pool keeps closed ones (answering "busy"
//   would park it in the queue of full connections, never to be reopened);
// - a deferred write that finds no socket drops its bytes (the statements
//   they belonged to were already rejected when the socket closed);
// - closing or terminating a connection forgets the pending write and its
//   timer, so a reconnected connection flushes again;
// - closing a connection rejects every statement still waiting on it, also
//   after a socket error: the error rejected those sent before it, but a
//   transaction's ROLLBACK issued between the error and the close would stay
//   queued and be taken, on reconnect, for the next session's statement —
//   the protocol then answers the wrong statement and the connection hangs;
// - closing a connection forgets the statement that was running and the
//   server's error for it (the FATAL "terminating connection" a restart
//   sends): left in place, the error is handed to the first statement of
//   the next session.
//
// The files are replaced (written aside, renamed), never edited in place:
// node_modules may be hard-linked with other checkouts.
import fs from "node:fs";
import path from "node:path";

export const GUARD_MARKER = "/* leasehold: closed-socket write guard */";
export const GUARDED_VERSION = "3.4.9";

const REPLACEMENTS = [
  {
    what: "execute refuses a connection without a socket",
    from: "  function execute(q) {\n    if (terminated)\n      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))\n",
    to: `  function execute(q) {\n    if (terminated)\n      return queryError(q, Errors.connection('CONNECTION_DESTROYED', options))\n\n    ${GUARD_MARKER}\n    if (!socket)\n      return (queryError(q, Errors.connection('CONNECTION_CLOSED', options)), true)\n`,
  },
  {
    what: "a deferred write without a socket drops its bytes",
    from: "  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)\n",
    to: "  function nextWrite(fn) {\n    if (!socket) {\n      nextWriteTimer !== null && clearImmediate(nextWriteTimer)\n      chunk = nextWriteTimer = null\n      return false\n    }\n    const x = socket.write(chunk, fn)\n",
  },
  {
    what: "terminate forgets the pending write",
    from: "    terminated = true\n    if (stream || query || initial || sent.length)\n      error(Errors.connection('CONNECTION_DESTROYED', options))\n\n    clearImmediate(nextWriteTimer)\n",
    to: "    terminated = true\n    if (stream || query || initial || sent.length)\n      error(Errors.connection('CONNECTION_DESTROYED', options))\n\n    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n",
  },
  {
    what: "closed forgets the pending write",
    from: "    incomings = null\n    clearImmediate(nextWriteTimer)\n    socket.removeListener('data', data)\n",
    to: "    incomings = null\n    clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null\n    socket.removeListener('data', data)\n",
  },
  {
    what: "closed forgets the dead session's statement and error",
    from: "    !hadError && (query || sent.length) && error(Errors.connection('CONNECTION_CLOSED', options, socket))\n    closedTime = performance.now()\n",
    to: "    if (query || sent.length)\n      error(Errors.connection('CONNECTION_CLOSED', options, socket))\n    query = results = errorResponse = null\n    result = new Result()\n    closedTime = performance.now()\n",
  },
];

/** The driver's connection.js copies Node may load (ESM for the hub, CommonJS for anything that requires it). */
export function driverFiles(root) {
  const dir = path.join(root, "node_modules", "postgres");
  return [path.join(dir, "src", "connection.js"), path.join(dir, "cjs", "src", "connection.js")];
}

function installedVersion(root) {
  return JSON.parse(fs.readFileSync(path.join(root, "node_modules", "postgres", "package.json"), "utf8")).version;
}

/** Whether every copy carries the guard. */
export function postgresDriverGuarded(root) {
  return driverFiles(root).every((file) => fs.existsSync(file) && fs.readFileSync(file, "utf8").includes(GUARD_MARKER));
}

/**
 * Applies the guard to each copy that lacks it; returns the files changed.
 * Throws when the installed driver is not the version the guard was written
 * for, or its text is not the expected one: a guard applied to code it was
 * not written against could hide the very failure it exists to stop.
 */
export function applyPostgresDriverGuard(root) {
  const version = installedVersion(root);
  const changed = [];
  for (const file of driverFiles(root)) {
    let text = fs.readFileSync(file, "utf8");
    if (text.includes(GUARD_MARKER)) continue;
    if (version !== GUARDED_VERSION) {
      throw new Error(`node_modules/postgres is ${version}; tools/lib/postgres-driver-guard.mjs was written for ${GUARDED_VERSION}: check whether the new version still writes to a closed socket, then update the guard`);
    }
    for (const r of REPLACEMENTS) {
      const at = text.indexOf(r.from);
      if (at === -1 || text.indexOf(r.from, at + 1) !== -1) throw new Error(`${file}: cannot apply the driver guard (${r.what}): the expected text is not there exactly once`);
      text = text.slice(0, at) + r.to + text.slice(at + r.from.length);
    }
    const aside = `${file}.${process.pid}.guard`;
    fs.writeFileSync(aside, text, { mode: fs.statSync(file).mode & 0o777 });
    fs.renameSync(aside, file);
    changed.push(file);
  }
  return changed;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..", "..");
  const changed = applyPostgresDriverGuard(root);
  if (changed.length > 0) console.log(`[postgres-driver-guard] guarded ${changed.map((f) => path.relative(root, f)).join(", ")}`);
}
