import type http from "node:http";
import type { EnvironmentVariables, HubConfig } from "../config";
import type { DatabaseHandle } from "../db";
import type { RequestListener } from "../hub/listen";

/**
 * The web front end (Next.js) is injected by the executable in bin/, so
 * server/ never imports Next.js itself.
 */
export interface WebFrontEnd {
  createRequestHandler(options: { hostname: string; port: number; server: http.Server }): Promise<RequestListener>;
}

/** Where a command writes: the terminal, or the control socket back to a CLI. */
export interface CliOutput {
  out(line: string): void;
  err(line: string): void;
}

/** An open database a command may use; in the hub it is the hub's own. */
export interface CommandDatabase {
  config: HubConfig;
  handle: DatabaseHandle;
}

export interface CliContext extends CliOutput {
  env: EnvironmentVariables;
  cwd: string;
  loadWeb(): Promise<WebFrontEnd>;
  /**
   * Runs `fn` with the hub's database. From a terminal this opens it (and
   * closes it after); inside the hub (control socket) it lends the open one.
   */
  withDatabase<T>(purpose: string, fn: (db: CommandDatabase) => Promise<T>): Promise<T>;
  /**
   * From a terminal: the data directory of a running hub that holds this
   * context's database (its lock taken, its control socket in place), else
   * undefined. Absent inside the hub, which never sends a command to itself.
   */
  runningHub?(): Promise<string | undefined>;
}

export const consoleOutput: CliOutput = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
};
