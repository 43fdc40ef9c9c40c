import { describe, expect, it } from "vitest";
import { RESERVED_OPERATION_NAMES } from "../../capabilities";
import { PIPELINE_TOOLS } from "./catalogue";
import { HUB_TOOLS } from "./listing";

describe("tool catalogue", () => {
  // A manifest operation with a hub tool's name would shadow that tool on the
  // MCP surface; the manifest schema refuses only the names it reserves.
  it.each([...HUB_TOOLS, ...PIPELINE_TOOLS].map((tool) => tool.name))("the hub's own tool %s is a reserved operation name", (name) => {
    expect(RESERVED_OPERATION_NAMES.has(name)).toBe(true);
  });
});
