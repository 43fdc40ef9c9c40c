import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { projectPath } from "../../common/paths";

/**
 * Migrations are never edited after they land (drizzle/README.md): each SQL
 * file's SHA-256 is recorded in drizzle/landed-migrations.json when it is
 * committed, and a changed, removed or unrecorded file fails here. A change
 * to the schema is a new migration, recorded as a new line.
 */
const dir = projectPath("drizzle", "migrations");
const recorded = JSON.parse(fs.readFileSync(projectPath("drizzle", "landed-migrations.json"), "utf8")) as Record<string, string>;
const sha256 = (file: string) => createHash("sha256").update(fs.readFileSync(path.join(dir, file))).digest("hex");

describe("landed migrations", () => {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith(".sql")).sort();
  it("every recorded migration still exists with the bytes it landed with", () => {
    for (const [file, digest] of Object.entries(recorded)) {
      expect(fs.existsSync(path.join(dir, file)), `${file} was removed`).toBe(true);
      expect(sha256(file), `${file} changed after it landed; add a new migration instead`).toBe(digest);
    }
  });
  it("every migration file is recorded (record a new one in drizzle/landed-migrations.json when it is committed)", () => {
    expect(files.filter((f) => recorded[f] === undefined)).toEqual([]);
  });
});
