// Binary XML cases aapt (API 29 framework, UTF-16 pools) cannot produce:
// UTF-8 string pools, API 33 split attributes, obfuscated attribute names.

import { describe, expect, it } from "vitest";
import { ATTR } from "./android-attrs";
import { type AxmlElement, parseAxml } from "./axml";
import { FactSet, Limitations } from "./facts";
import { DEFAULT_LIMITS } from "./limits";
import { manifestFacts } from "./manifest";
import { buildAxml } from "./test/axml-writer";

function facts(root: AxmlElement): Map<string, unknown> {
  const set = new FactSet();
  manifestFacts(root, set, new Limitations());
  return new Map(set.facts.map((f) => [f.id, f.value]));
}

describe("binary XML decoding", () => {
  for (const utf8 of [false, true]) {
    it(`a ${utf8 ? "UTF-8" : "UTF-16"} string pool: requiredSplitTypes/splitTypes by resource id; hex int and reference values`, () => {
      const doc = parseAxml(
        buildAxml(
          {
            name: "manifest",
            attrs: [
              { name: "package", string: "org.example.splits" },
              { android: true, name: "versionCode", id: ATTR.versionCode, type: 0x11, data: 0x10 },
              { android: true, name: "requiredSplitTypes", id: ATTR.requiredSplitTypes, string: "abi,density" },
              { android: true, name: "splitTypes", id: ATTR.splitTypes, string: "" },
            ],
            children: [{ name: "application", attrs: [{ android: true, name: "label", id: ATTR.label, type: 0x01, data: 0x7f010000 }] }],
          },
          { utf8 },
        ),
        DEFAULT_LIMITS,
      );
      expect(doc.root!.children[0]!.attributes[0]).toMatchObject({ resourceId: ATTR.label, type: 0x01, data: 0x7f010000 });
      const m = facts(doc.root!);
      expect(m.get("package.name")).toBe("org.example.splits");
      expect(m.get("package.version_code")).toBe(16);
      expect(m.get("split.required_split_types")).toEqual(["abi", "density"]);
      expect(m.get("split.kind")).toBe("base");
      expect(m.get("split.incomplete")).toBe(true);
    });
  }

  it("obfuscated attribute names still resolve by resource id; a fake android:exported without the id is ignored", () => {
    const doc = parseAxml(
      buildAxml({
        name: "manifest",
        attrs: [{ name: "package", string: "org.example.obf" }],
        children: [
          {
            name: "application",
            children: [
              { name: "activity", attrs: [{ android: true, name: "x1", id: ATTR.name, string: ".A" }, { android: true, name: "x2", id: ATTR.exported, type: 0x12, data: 0xffffffff }] },
              { name: "service", attrs: [{ android: true, name: "x1", id: ATTR.name, string: ".S" }, { android: true, name: "exported", type: 0x12, data: 0xffffffff }] },
            ],
          },
        ],
      }),
      DEFAULT_LIMITS,
    );
    const m = facts(doc.root!);
    expect(m.get("component.activity:org.example.obf.A")).toMatchObject({ exported: true, exported_basis: "explicit" });
    expect(m.get("component.service:org.example.obf.S")).toMatchObject({ exported: false, exported_basis: expect.stringContaining("implied") as unknown });
  });

  it("element, depth and attribute bounds refuse hostile documents", () => {
    let deep: { name: string; children: unknown[] } = { name: "leaf", children: [] };
    for (let i = 0; i < 20; i++) deep = { name: "n", children: [deep] };
    const bytes = buildAxml(deep as Parameters<typeof buildAxml>[0]);
    expect(() => parseAxml(bytes, { ...DEFAULT_LIMITS, maxDepth: 10 })).toThrow(/nested deeper than 10/);
    expect(() => parseAxml(bytes, { ...DEFAULT_LIMITS, maxElements: 5 })).toThrow(/more than 5 elements/);
    const many = buildAxml({ name: "manifest", attrs: Array.from({ length: 30 }, (_, i) => ({ name: `a${i}`, type: 0x10, data: i })) });
    expect(() => parseAxml(many, { ...DEFAULT_LIMITS, maxAttributes: 10 })).toThrow(/has 30 attributes/);
    const strings = buildAxml({ name: "manifest", attrs: [{ name: "package", string: "p" }] });
    expect(() => parseAxml(strings, { ...DEFAULT_LIMITS, maxStrings: 2 })).toThrow(/exceeds the limit of 2/);
  });
});
