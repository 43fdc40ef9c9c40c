import type { EnvironmentVariables } from "../config";
import type http from "node:http";
import type { RequestListener } from "../hub/listen";

/**
 * The web front end (Next.js) is injected by the executable in bin/, so
 * server/ never imports Next.js itself.
 */
export interface WebFrontEnd {
  createRequestHandler(options: { hostname: string; port: number; server: http.Server }): Promise<RequestListener>;
}

export interface CliContext {
  env: EnvironmentVariables;
  cwd: string;
  loadWeb(): Promise<WebFrontEnd>;
}
