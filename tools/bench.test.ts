import { describe, expect, it } from "vitest";
import { spliceBenchSection } from "./bench.mjs";

describe("npm run bench -- --docs: a bench's section in docs/benchmarks.md", () => {
  const doc = "# Benchmarks\n\nbefore\n<!-- bench:launch -->\nold table\n<!-- /bench:launch -->\nafter\n";

  it("replaces only the text between the bench's markers", () => {
    expect(spliceBenchSection(doc, "launch", "| new | table |\n")).toBe("# Benchmarks\n\nbefore\n<!-- bench:launch -->\n| new | table |\n<!-- /bench:launch -->\nafter\n");
  });

  it("refuses a document without the markers, with them reversed, or with two sections for one bench", () => {
    expect(() => spliceBenchSection("# Benchmarks\n", "launch", "x")).toThrow(/needs exactly one <!-- bench:launch -->/);
    expect(() => spliceBenchSection("<!-- /bench:launch -->\n<!-- bench:launch -->\n", "launch", "x")).toThrow(/needs exactly one/);
    expect(() => spliceBenchSection(`${doc}${doc}`, "launch", "x")).toThrow(/needs exactly one/);
    expect(() => spliceBenchSection(doc, "egress", "x")).toThrow(/bench:egress/);
  });
});
