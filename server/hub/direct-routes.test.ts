import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DIRECT_ROUTES, matchDirectRoute } from "./direct-routes";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** Every `route.ts` under `app/<dir>`, as its URL path (with `[id]`) and the HTTP methods it exports. */
function appRoutes(dir: string): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  const walk = (relative: string) => {
    const absolute = path.join(ROOT, "app", relative);
    for (const entry of fs.readdirSync(absolute, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(path.join(relative, entry.name));
      else if (entry.name === "route.ts") {
        const source = fs.readFileSync(path.join(absolute, entry.name), "utf8");
        const methods = new Set([...source.matchAll(/export (?:async function|const) (GET|POST|PUT|PATCH|DELETE|OPTIONS|HEAD)\b/g)].map((m) => m[1]!));
        found.set(`/${relative}`, methods);
      }
    }
  };
  walk(dir);
  return found;
}

describe("direct routes", () => {
  it("answer exactly the methods and paths the app's agent, MCP, health and readiness route files declare, no more and no fewer", () => {
    const files = new Map([...appRoutes("api/agent"), ...appRoutes("api/mcp"), ...appRoutes("api/health"), ...appRoutes("api/ready")]);
    const direct = new Map<string, Set<string>>();
    for (const route of DIRECT_ROUTES) direct.set(route.path, (direct.get(route.path) ?? new Set()).add(route.method));
    expect([...direct.keys()].sort()).toEqual([...files.keys()].sort());
    for (const [route, methods] of files) expect([...(direct.get(route) ?? [])].sort(), route).toEqual([...methods].sort());
  });

  it("match a path exactly, decode the one [id] segment, and leave everything else to Next.js", () => {
    expect(matchDirectRoute("GET", "/api/agent/jobs")?.route.path).toBe("/api/agent/jobs");
    const result = matchDirectRoute("POST", "/api/agent/jobs/a%20b/result");
    expect(result?.route.path).toBe("/api/agent/jobs/[id]/result");
    expect(result?.id).toBe("a b");
    expect(matchDirectRoute("POST", "/api/mcp")?.route.path).toBe("/api/mcp");
    // Not exact: Next.js answers these as it always did.
    expect(matchDirectRoute("POST", "/api/agent/jobs")).toBeUndefined();
    expect(matchDirectRoute("GET", "/api/agent/jobs/")).toBeUndefined();
    expect(matchDirectRoute("HEAD", "/api/agent/jobs")).toBeUndefined();
    expect(matchDirectRoute("POST", "/api/agent/jobs//result")).toBeUndefined();
    expect(matchDirectRoute("POST", "/api/agent/jobs/a/b/result")).toBeUndefined();
    expect(matchDirectRoute("POST", "/api/agent/jobs/%E0%A4%A/result")).toBeUndefined();
    expect(matchDirectRoute("GET", "/api/mcp/x")).toBeUndefined();
    expect(matchDirectRoute("GET", "/api/health")?.route.path).toBe("/api/health");
    expect(matchDirectRoute("POST", "/api/health")).toBeUndefined();
    expect(matchDirectRoute("GET", "/api/ledger/checkpoint")).toBeUndefined();
    expect(matchDirectRoute("GET", "/API/MCP")).toBeUndefined();
  });
});
