import { beforeAll, describe, expect, it } from "vitest";
import type { Check, Fact } from "./facts";
import { inspectApk } from "./inspect";
import { MIN_RECOMMENDED_TARGET_SDK, preflight } from "./preflight";
import { type FixtureName, apkFixtures } from "./test/fixtures";

let apks: Record<FixtureName, string>;
beforeAll(async () => {
  apks = await apkFixtures();
}, 300_000);

function checksOf(name: FixtureName): Map<string, Check> {
  return new Map(preflight(inspectApk(apks[name]).facts).map((c) => [c.id, c]));
}

function check(m: Map<string, Check>, id: string): Check {
  const c = m.get(id);
  if (c === undefined) throw new Error(`no check ${id}`);
  return c;
}

describe("apk_preflight: Appendix A as checks derived from facts", () => {
  it("REQUIRE_SECURE_ENV=1 fails the preflight; its absence passes", () => {
    expect(check(checksOf("secure_env"), "manifest.require_secure_env")).toMatchObject({ status: "fail", from: ["manifest.require_secure_env"] });
    expect(check(checksOf("minimal"), "manifest.require_secure_env").status).toBe("pass");
  });

  it("16 KB alignment: misaligned libraries fail with both reasons named; aligned ones pass", () => {
    const bad = check(checksOf("native_misaligned"), "native.alignment_16k");
    expect(bad.status).toBe("fail");
    expect(bad.detail).toContain("libold.so: PT_LOAD p_align 4096 < 16384");
    expect(bad.detail).toContain("libnew.so: stored uncompressed at offset");
    expect(check(checksOf("native_aligned"), "native.alignment_16k")).toMatchObject({ status: "pass", detail: "1 libraries 16 KB aligned" });
  });

  it("a feature split cannot be installed alone: fail", () => {
    expect(check(checksOf("feature_split"), "split.complete")).toMatchObject({ status: "fail", detail: expect.stringContaining("feature split") as unknown });
    expect(check(checksOf("minimal"), "split.complete").status).toBe("pass");
  });

  it("dangerous fixture: low target SDK, debuggable, dangerous permissions, unguarded exported components and background services warn; signatures pass", () => {
    const m = checksOf("dangerous");
    expect(check(m, "sdk.levels")).toMatchObject({ status: "warn", detail: expect.stringContaining(`below ${MIN_RECOMMENDED_TARGET_SDK}`) as unknown });
    expect(check(m, "application.debuggable").status).toBe("warn");
    expect(check(m, "permissions.dangerous")).toMatchObject({ status: "warn", detail: expect.stringContaining("android.permission.CAMERA") as unknown });
    expect(check(m, "components.exported_without_permission").detail).toContain("provider:org.leasehold.fixture.dangerous.OpenProvider");
    expect(check(m, "components.background")).toMatchObject({ status: "warn", detail: expect.stringContaining(":upload") as unknown });
    expect(check(m, "signing.present")).toMatchObject({ status: "pass", detail: expect.stringContaining("v1, v2, v3") as unknown });
  });

  it("an unsigned APK fails the signature check; v1-only passes at targetSdk 29 and fails from 30", () => {
    expect(check(checksOf("minimal"), "signing.present").status).toBe("fail");
    expect(check(checksOf("v1_only"), "signing.present")).toMatchObject({ status: "pass", from: ["signing.schemes"] });
    const at30: Fact[] = [
      { id: "sdk.target", value: 30, state: "observed", source: "x" },
      { id: "signing.schemes", value: ["v1"], state: "derived", source: "x", from: ["signing.v1"] },
    ];
    expect(preflight(at30).find((c) => c.id === "signing.present")).toMatchObject({ status: "fail", from: ["signing.schemes", "sdk.target"], detail: expect.stringContaining("requires v2") as unknown });
  });

  it("frameworks warn (they change how the UI can be driven) and carry the facts' state", () => {
    const flutter = check(checksOf("flutter"), "frameworks");
    expect(flutter).toMatchObject({ status: "warn", state: "derived" });
    expect(flutter.from).toContain("framework.flutter");
    expect(check(checksOf("minimal"), "frameworks").status).toBe("pass");
  });

  it("what a static read cannot know is unknown with the reason, never pass", () => {
    const m = checksOf("dangerous");
    for (const id of ["dependency.keystore", "dependency.signature_checks", "dependency.gms"]) {
      expect(check(m, id).status).toBe("unknown");
      expect(check(m, id).detail).toMatch(/dex/);
    }
  });

  it("a hypothesized framework fact makes the frameworks check hypothesized", () => {
    const facts: Fact[] = [
      { id: "framework.unity", value: { name: "Unity", files: ["lib/arm64-v8a/libunity.so"], content_magic: null }, state: "hypothesized", source: "file names only", from: ["zip.entries"] },
      { id: "frameworks.detected", value: ["framework.unity"], state: "derived", source: "x", from: ["framework.unity"] },
    ];
    expect(preflight(facts).find((c) => c.id === "frameworks")).toMatchObject({ status: "warn", state: "hypothesized", detail: expect.stringContaining("Unity (hypothesized)") as unknown });
  });

  it("with no facts at all (manifest unreadable) manifest checks are unknown, not pass", () => {
    const m = new Map(preflight([]).map((c) => [c.id, c]));
    for (const id of ["sdk.levels", "split.complete", "manifest.require_secure_env", "permissions.dangerous", "application.debuggable", "components.background"]) {
      expect(check(m, id).status).toBe("unknown");
    }
    expect(check(m, "package.identity").status).toBe("fail");
  });
});
