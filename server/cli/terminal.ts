import fs from "node:fs";
import { loadConfig, type EnvironmentVariables } from "../config";
import { inspectDataDir } from "../db/data-dir";
import { dataDirHolder } from "../db/lock";
import { LeaseholdError } from "../errors";
import { controlSocketPath } from "../hub/control-socket";
import { consoleOutput, type CliContext, type WebFrontEnd } from "./context";

/** Thrown by `withDatabase` when a running hub holds the database and can run the command itself. */
export class HubHoldsDatabase extends Error {
  constructor(readonly dataDir: string) {
    super("the hub holds the database");
  }
}

/** The context of a command typed at a terminal. */
export function terminalContext(env: EnvironmentVariables, cwd: string, loadWeb: () => Promise<WebFrontEnd>): CliContext {
  return {
    ...consoleOutput,
    env,
    cwd,
    loadWeb,
    async withDatabase(purpose, fn) {
      const parsed = loadConfig(env, cwd);
      if (!parsed.ok) throw new LeaseholdError("CONFIG_INVALID", parsed.message, { tier: "config" });
      let opened;
      try {
        // Loaded here, not at start-up: a command sent whole to a running hub never needs the database code.
        const { openHubDatabase } = await import("../db/open");
        opened = await openHubDatabase(parsed.config, { migrate: true, purpose });
      } catch (error) {
        if (error instanceof LeaseholdError && error.code === "DATA_DIR_LOCKED" && fs.existsSync(controlSocketPath(parsed.config.dataDir))) {
          throw new HubHoldsDatabase(parsed.config.dataDir);
        }
        throw error;
      }
      try {
        return await fn({ config: parsed.config, handle: opened.handle });
      } finally {
        await opened.close();
      }
    },
    async runningHub() {
      const parsed = loadConfig(env, cwd);
      // A bad setting is the command's to report, as it would be without a hub.
      if (!parsed.ok) return undefined;
      let canonical: string;
      try {
        canonical = inspectDataDir(parsed.config.dataDir).canonical;
      } catch {
        return undefined;
      }
      // The condition withDatabase forwards on (its lock held, a control socket in place), asked without taking the lock.
      if (!fs.existsSync(controlSocketPath(parsed.config.dataDir))) return undefined;
      return (await dataDirHolder(canonical)) === undefined ? undefined : parsed.config.dataDir;
    },
  };
}
