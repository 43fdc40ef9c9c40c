import fs from "node:fs";
import { loadConfig, type EnvironmentVariables } from "../config";
import { openHubDatabase } from "../db";
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
  };
}
