import { execFileSync } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import type { Fact } from "./facts";
import { inspectApk } from "./inspect";
import { type FixtureName, FRAMEWORK_RES, apkFixtures, apksignerCertDigests } from "./test/fixtures";

let apks: Record<FixtureName, string>;
beforeAll(async () => {
  apks = await apkFixtures();
}, 300_000);

function factsOf(name: FixtureName): Map<string, Fact> {
  const r = inspectApk(apks[name]);
  return new Map(r.facts.map((f) => [f.id, f]));
}

function fact(m: Map<string, Fact>, id: string): Fact {
  const f = m.get(id);
  if (f === undefined) throw new Error(`no fact ${id}; have ${[...m.keys()].join(", ")}`);
  return f;
}

describe("apk_inspect on real APKs built by aapt", () => {
  it("minimal: identity and SDK are observed and agree with aapt dump badging; absent flags are derived defaults", () => {
    const m = factsOf("minimal");
    const badging = execFileSync("aapt", ["dump", "badging", apks.minimal], { encoding: "utf8" });
    expect(badging).toContain(`package: name='${String(fact(m, "package.name").value)}' versionCode='7' versionName='1.7.0'`);
    expect(fact(m, "package.name")).toMatchObject({ value: "org.leasehold.fixture.minimal", state: "observed" });
    expect(fact(m, "package.version_code")).toMatchObject({ value: 7, state: "observed" });
    expect(fact(m, "package.version_name")).toMatchObject({ value: "1.7.0", state: "observed" });
    expect(fact(m, "sdk.min")).toMatchObject({ value: 24, state: "observed" });
    expect(fact(m, "sdk.target")).toMatchObject({ value: 35, state: "observed" });
    expect(fact(m, "application.debuggable")).toMatchObject({ value: false, state: "derived" });
    expect(fact(m, "application.allow_backup")).toMatchObject({ value: true, state: "derived" });
    expect(fact(m, "application.uses_cleartext_traffic")).toMatchObject({ value: false, state: "derived", from: ["sdk.target"] });
    expect(fact(m, "component.activity:org.leasehold.fixture.minimal.MainActivity")).toMatchObject({ state: "observed", value: { exported: true, exported_basis: "explicit", intent_filters: 1 } });
    expect(fact(m, "manifest.require_secure_env")).toMatchObject({ value: false, state: "observed" });
    expect(fact(m, "signing.schemes").value).toEqual([]);
    expect(fact(m, "signing.block").value).toBeNull();
    expect(fact(m, "split.kind").value).toBe("base");
  });

  it("dangerous: dangerous permissions flagged; exported explicit vs implied by intent-filter; exported without permission; explicit flags observed; v1+v2+v3 certificates match apksigner", () => {
    const m = factsOf("dangerous");
    const pkg = "org.leasehold.fixture.dangerous";
    expect(fact(m, "permissions.requested").value).toEqual([
      "android.permission.INTERNET",
      "android.permission.CAMERA",
      "android.permission.READ_CONTACTS",
      "android.permission.ACCESS_FINE_LOCATION",
      "android.permission.RECORD_AUDIO",
      "android.permission.FOREGROUND_SERVICE",
    ]);
    expect(fact(m, "permissions.dangerous")).toMatchObject({
      state: "derived",
      from: ["permissions.requested"],
      value: ["android.permission.CAMERA", "android.permission.READ_CONTACTS", "android.permission.ACCESS_FINE_LOCATION", "android.permission.RECORD_AUDIO"],
    });
    // targetSdk 30: an intent-filter without android:exported implies exported.
    expect(fact(m, `component.service:${pkg}.SyncService`)).toMatchObject({ state: "derived", from: ["sdk.target"], value: { exported: true, permission: null } });
    expect(fact(m, `component.service:${pkg}.Uploader`)).toMatchObject({ state: "observed", value: { exported: false, process: ":upload" } });
    expect(fact(m, `component.receiver:${pkg}.BootReceiver`)).toMatchObject({ state: "observed", value: { exported: true, permission: "android.permission.RECEIVE_BOOT_COMPLETED" } });
    expect(fact(m, `component.provider:${pkg}.OpenProvider`)).toMatchObject({ state: "observed", value: { exported: true, permission: null } });
    expect(fact(m, `component.provider:${pkg}.PrivateProvider`)).toMatchObject({ state: "derived", value: { exported: false } });
    expect(fact(m, "components.exported_without_permission")).toMatchObject({
      state: "derived",
      value: [`component.activity:${pkg}.MainActivity`, `component.service:${pkg}.SyncService`, `component.provider:${pkg}.OpenProvider`],
    });
    expect(fact(m, "application.debuggable")).toMatchObject({ value: true, state: "observed" });
    expect(fact(m, "application.allow_backup")).toMatchObject({ value: false, state: "observed" });
    expect(fact(m, "application.uses_cleartext_traffic")).toMatchObject({ value: true, state: "observed" });
    expect(fact(m, "services.foreground").value).toEqual([`${pkg}.Uploader`]);
    const [digest] = apksignerCertDigests(apks.dangerous);
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(fact(m, "signing.schemes").value).toEqual(["v1", "v2", "v3"]);
    const v1 = fact(m, "signing.v1").value as { signers: { certificates: { sha256: string }[] }[] };
    expect(v1.signers[0]!.certificates.map((c) => c.sha256)).toEqual([digest]);
    for (const s of ["signing.v2", "signing.v3"]) {
      const v = fact(m, s).value as { signers: { certificates: { sha256: string; subject: string | null }[] }[] };
      expect(v.signers[0]!.certificates[0]).toMatchObject({ sha256: digest, subject: expect.stringContaining("CN=Leasehold Fixture") as unknown });
    }
  });

  it("secure_env: the REQUIRE_SECURE_ENV property aapt compiled as an integer is observed as declared", () => {
    const dump = execFileSync("aapt", ["dump", "xmltree", apks.secure_env, "AndroidManifest.xml"], { encoding: "utf8" });
    expect(dump).toMatch(/REQUIRE_SECURE_ENV[\s\S]*android:value\(0x01010024\)=\(type 0x10\)0x1/);
    expect(fact(factsOf("secure_env"), "manifest.require_secure_env")).toMatchObject({ value: true, state: "observed" });
  });

  it("native_aligned: ELF p_align 16384 and a stored entry at a 16 KiB offset are both reported aligned", () => {
    const m = factsOf("native_aligned");
    expect(fact(m, "native.abis").value).toEqual({ "arm64-v8a": ["libgood.so"] });
    const lib = fact(m, "native.lib:lib/arm64-v8a/libgood.so");
    expect(lib).toMatchObject({ state: "observed", value: { stored: true, elf: { machine: "aarch64", load_aligns: [16384, 16384], machine_matches_abi: true } } });
    expect((lib.value as { data_offset: number }).data_offset % 16384).toBe(0);
    expect(fact(m, "native.alignment_16k")).toMatchObject({ state: "derived", value: { aligned: ["lib/arm64-v8a/libgood.so"], misaligned: [] } });
  });

  it("native_misaligned: a 4 KiB p_align and a 4 KiB-page ZIP offset are separate reasons, per library", () => {
    const m = factsOf("native_misaligned");
    const a = fact(m, "native.alignment_16k").value as { aligned: string[]; misaligned: { library: string; reasons: string[] }[] };
    expect(a.aligned).toEqual([]);
    const byLib = Object.fromEntries(a.misaligned.map((x) => [x.library, x.reasons]));
    expect(byLib["lib/arm64-v8a/libold.so"]).toEqual(expect.arrayContaining([expect.stringContaining("p_align 4096 < 16384"), expect.stringContaining("not a multiple of 16384")]));
    expect(byLib["lib/arm64-v8a/libnew.so"]!.join()).not.toContain("p_align");
    expect(byLib["lib/arm64-v8a/libnew.so"]!.join()).toContain("not a multiple of 16384");
  });

  it("v1_only: only the JAR signature, its certificate digest equal to apksigner's; no signing block", () => {
    const m = factsOf("v1_only");
    expect(fact(m, "signing.schemes").value).toEqual(["v1"]);
    expect(fact(m, "signing.block").value).toBeNull();
    const v1 = fact(m, "signing.v1").value as { manifest_present: boolean; signers: { file: string; signature_file_present: boolean; certificates: { sha256: string }[] }[] };
    expect(v1.manifest_present).toBe(true);
    expect(v1.signers[0]).toMatchObject({ file: "META-INF/FIXTURE.RSA", signature_file_present: true });
    expect(v1.signers[0]!.certificates.map((c) => c.sha256)).toEqual(apksignerCertDigests(apks.v1_only));
  });

  it("v2v3: the APK Signing Block's v2 and v3 pairs, no v1 files", () => {
    const m = factsOf("v2v3");
    expect(fact(m, "signing.schemes").value).toEqual(["v2", "v3"]);
    expect(m.has("signing.v1")).toBe(false);
    expect((fact(m, "signing.block").value as { ids: string[] }).ids).toEqual(expect.arrayContaining(["v2", "v3"]));
    const v3 = fact(m, "signing.v3").value as { signers: { certificates: { sha256: string }[] }[] };
    expect(v3.signers[0]!.certificates[0]!.sha256).toBe(apksignerCertDigests(apks.v2v3)[0]);
  });

  it("flutter: libflutter.so + flutter_assets + the Dart snapshot symbol in libapp.so → observed", () => {
    const f = fact(factsOf("flutter"), "framework.flutter");
    expect(f.state).toBe("observed");
    expect(f.value).toMatchObject({ name: "Flutter", content_magic: expect.stringContaining("_kDartVmSnapshotData") as unknown });
  });

  it("hermes: libhermes.so plus the Hermes bytecode magic in index.android.bundle → observed", () => {
    const m = factsOf("hermes");
    expect(fact(m, "framework.hermes")).toMatchObject({ state: "observed" });
    expect(fact(m, "frameworks.detected").value).toEqual(expect.arrayContaining(["framework.hermes", "framework.react_native"]));
  });

  it("feature_split: split name and isFeatureSplit observed; kind and incompleteness derived from them", () => {
    const m = factsOf("feature_split");
    expect(fact(m, "split.name")).toMatchObject({ value: "feature_camera", state: "observed" });
    expect(fact(m, "split.is_feature_split")).toMatchObject({ value: true, state: "observed" });
    expect(fact(m, "split.kind")).toMatchObject({ value: "feature", state: "derived", from: ["split.name", "split.is_feature_split"] });
    expect(fact(m, "split.incomplete").value).toBe(true);
  });

  it("an open descriptor gives the same result as the path", () => {
    const fd = openSync(apks.dangerous, "r");
    try {
      expect(inspectApk(fd)).toEqual(inspectApk(apks.dangerous));
    } finally {
      closeSync(fd);
    }
  });

  it("the platform framework the fixtures compile against is the one the attribute ids were checked with", () => {
    const dump = execFileSync("aapt", ["dump", "resources", FRAMEWORK_RES], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
    for (const [id, name] of [
      ["0x01010003", "name"],
      ["0x01010010", "exported"],
      ["0x010104ec", "usesCleartextTraffic"],
      ["0x0101055b", "isFeatureSplit"],
    ]) {
      expect(dump).toContain(`spec resource ${id} android:attr/${name}:`);
    }
  });
});
