/**
 * A process that behaves like a hub's ledger under load, for the crash test:
 * opens the database the way the hub does, runs the integrator, and has
 * WRITERS concurrent writers append entries, printing `ok <writer> <seq> <id>`
 * only after an append returned its id. The parent SIGKILLs it at random.
 * With `--drain`, it appends nothing, integrates what is waiting and exits.
 */
import { loadConfig } from "../../config";
import { openHubDatabase } from "../../db";
import { startIntegrator } from "../integrate";
import { loadOrCreateLogKey } from "../log-key";
import { appendTestEntry } from "./fixtures";

const writers = Number(process.env.CRASH_WRITERS ?? 8);
const round = process.env.CRASH_ROUND ?? "0";
const drain = process.argv.includes("--drain");

const parsed = loadConfig(process.env);
if (!parsed.ok) throw new Error(parsed.message);
const opened = await openHubDatabase(parsed.config, { migrate: true, purpose: "ledger crash test" });
const key = loadOrCreateLogKey(parsed.config.dataDir, parsed.config.publicUrl);
const integrator = startIntegrator(opened.handle.db, key, { pollMs: 50 });

if (drain) {
  const size = await integrator.flush(60_000);
  await integrator.stop();
  await opened.close();
  process.stdout.write(`drained ${size}\n`);
  process.exit(0);
}

process.stdout.write("ready\n");
await Promise.all(
  Array.from({ length: writers }, async (_, w) => {
    for (let seq = 0; ; seq++) {
      const id = await appendTestEntry(opened.handle.db, `crash-r${round}-w${w}-s${seq}`);
      process.stdout.write(`ok ${w} ${seq} ${id}\n`);
    }
  }),
);
