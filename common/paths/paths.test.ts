import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findProjectRoot, projectPath, projectRoot } from "./index";

const checkout = path.resolve(import.meta.dirname, "../..");
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "lh-paths-"));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe("the project root", () => {
  it("is the checkout when running from source", () => {
    expect(projectRoot()).toBe(checkout);
    expect(fs.existsSync(projectPath("drizzle", "migrations", "meta", "_journal.json"))).toBe(true);
  });

  it("is the nearest directory above whose package.json is named leasehold, skipping other packages and unreadable ones", () => {
    const root = path.join(scratch, "checkout");
    fs.mkdirSync(path.join(root, "dist", "other", "deep"), { recursive: true });
    fs.writeFileSync(path.join(root, "package.json"), JSON.stringify({ name: "leasehold" }));
    fs.writeFileSync(path.join(root, "dist", "package.json"), "{ not json");
    fs.writeFileSync(path.join(root, "dist", "other", "package.json"), JSON.stringify({ name: "other" }));
    expect(findProjectRoot(path.join(root, "dist", "other", "deep"))).toBe(root);
    expect(findProjectRoot(root)).toBe(root);
  });

  it("is not found outside a checkout", () => {
    fs.mkdirSync(path.join(scratch, "elsewhere"));
    expect(findProjectRoot(path.join(scratch, "elsewhere"))).toBeNull();
  });
});
