import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { boundaryErrors } from "../support/boundary-lint";

/**
 * Both directions of the hub ⇄ guest boundary (server/trust/README.md), held
 * by the fixtures in ./fixtures: each is linted as if it lived in the folder
 * it pretends to (nothing is written there) with the project's own config,
 * so removing a rule, narrowing its `files` or widening what it
 * admits fails here. The fixtures themselves are outside the normal lint run
 * and typecheck (eslint.config.mjs ignores, tsconfig.json exclude).
 */
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const FIXTURES = path.join(import.meta.dirname, "fixtures");

/** fixture file → the folder it is linted in. */
const PLACED: Record<string, string> = {
  "hub-imports-guest.ts": "server/hosts",
  "app-imports-guest.tsx": "app",
  "app-imports-guest-by-alias.tsx": "app/(admin)",
  "hub-imports-contract.ts": "server/hosts",
  "guest-imports-db.ts": "agent-guest/daemon",
  "guest-imports-contract.ts": "agent-guest/daemon",
  "scrub-reads-files.ts": "server/trust/scrub",
  "evidence-streams.ts": "server/trust/evidence",
};

const errors = new Map<string, string[]>();

beforeAll(async () => {
  // Each fixture linted as if it lived in its folder, under a name no real file has.
  const placed = new Map(Object.entries(PLACED).map(([name, dir]) => [name, path.join(ROOT, dir, `lint-boundary-fixture-${name}`)]));
  const linted = await boundaryErrors([...placed].map(([name, filePath]) => ({ filePath, code: fs.readFileSync(path.join(FIXTURES, name), "utf8") })), ROOT);
  for (const [name, filePath] of placed) errors.set(name, linted.get(filePath) ?? []);
}, 240_000);

describe("hub ⇄ guest import boundaries (leasehold/import-boundaries on fixtures)", () => {
  it("refuses hub code under server/ importing the guest", () => {
    expect(errors.get("hub-imports-guest.ts")).toEqual([expect.stringMatching(/may not import agent-guest\/workers\/bundle: the hub imports nothing of the guest/)]);
  });

  it("refuses the web app under app/ importing the guest", () => {
    expect(errors.get("app-imports-guest.tsx")).toEqual([expect.stringMatching(/may not import agent-guest\/cli: the hub imports nothing of the guest/)]);
  });

  it("refuses the web app importing the guest through the ~/ alias", () => {
    expect(errors.get("app-imports-guest-by-alias.tsx")).toEqual([expect.stringMatching(/may not import agent-guest\/cli: the hub imports nothing of the guest/)]);
  });

  it("refuses the guest importing the hub's database", () => {
    expect(errors.get("guest-imports-db.ts")).toEqual([expect.stringMatching(/may not import server\/db: the guest shares only the hub ⇄ guest contract in server\/trust/)]);
  });

  it("admits the contract (evidence, scrubber, bundle reader) from both sides", () => {
    expect(errors.get("hub-imports-contract.ts")).toEqual([]);
    expect(errors.get("guest-imports-contract.ts")).toEqual([]);
  });

  it("keeps the scrubber's node:stream and the reader's node:fs to their own files", () => {
    expect(errors.get("scrub-reads-files.ts")).toEqual([expect.stringMatching(/may not import the package node:fs \(only node:crypto, zod, node:stream\)/)]);
    expect(errors.get("evidence-streams.ts")).toEqual([expect.stringMatching(/may not import the package node:stream \(only node:crypto, zod, @oslojs\/crypto\/sha2\)/)]);
  });
});
