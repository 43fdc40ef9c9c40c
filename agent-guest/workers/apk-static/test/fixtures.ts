// Real APKs for the worker's tests, built with Debian's Android tools: aapt
// (binary manifest + resources against the platform's framework-res.apk),
// zipalign, apksigner with a key made by keytool. Built once per version of
// this file: the cache directory is keyed by this file's own SHA-256 (and
// the ELF helper it uses), so every test file that asks gets the same APKs
// and a change here rebuilds them. Concurrent builders each build into a
// private directory and rename it into place; the loser uses the winner's.

import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { EM_AARCH64, buildElf64 } from "./elf";

export const FRAMEWORK_RES = "/usr/share/android-framework-res/framework-res.apk";
const DEBIAN_PACKAGES = ["aapt", "android-framework-res", "zipalign", "apksigner", "openjdk-17-jre-headless"];
const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, "../../../..");
export const KEY_PASSWORD = "leasehold-test";

export const FIXTURE_NAMES = [
  "minimal",
  "dangerous",
  "secure_env",
  "native_aligned",
  "native_misaligned",
  "v1_only",
  "v2v3",
  "flutter",
  "hermes",
  "feature_split",
] as const;
export type FixtureName = (typeof FIXTURE_NAMES)[number];

/** Installs the Debian tools through the project's one installer (tools/lib/apt.mjs). */
export function ensureAndroidTools(): void {
  const script = `import(${JSON.stringify(join(REPO, "tools/lib/apt.mjs"))}).then((m) => m.ensureDebianPackages(${JSON.stringify(DEBIAN_PACKAGES)}, { quiet: true }))`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { stdio: ["ignore", "inherit", "inherit"] });
  if (r.status !== 0) throw new Error(`installing ${DEBIAN_PACKAGES.join(", ")} failed (exit ${r.status})`);
}

function run(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

const NS = 'xmlns:android="http://schemas.android.com/apk/res/android"';

function manifest(pkg: string, body: string, opts: { sdk?: [number, number]; manifestAttrs?: string; appAttrs?: string } = {}): string {
  const [min, target] = opts.sdk ?? [24, 35];
  return `<?xml version="1.0" encoding="utf-8"?>
<manifest ${NS} package="${pkg}" android:versionCode="7" android:versionName="1.7.0" ${opts.manifestAttrs ?? ""}>
  <uses-sdk android:minSdkVersion="${min}" android:targetSdkVersion="${target}"/>
  ${body.includes("<application") ? body : `<application android:label="@string/app_name" ${opts.appAttrs ?? ""}>${body}</application>`}
</manifest>
`;
}

const MAIN_ACTIVITY = `<activity android:name=".MainActivity" android:exported="true">
      <intent-filter><action android:name="android.intent.action.MAIN"/><category android:name="android.intent.category.LAUNCHER"/></intent-filter>
    </activity>`;

interface Spec {
  manifest: string;
  /** Extra archive files, by archive name (written under a raw directory aapt adds). */
  files?: Record<string, Buffer | string>;
  /** zipalign step: page alignment for .so at 4 KiB ("page4k") or every stored entry at 16 KiB ("all16k"). */
  align?: "page4k" | "all16k";
  sign?: "v1" | "v2v3" | "v1v2v3";
}

function specs(): Record<FixtureName, Spec> {
  const hermesMagic = Buffer.from([0xc6, 0x1f, 0xbc, 0x03, 0xc1, 0x03, 0x19, 0x1f]);
  return {
    minimal: { manifest: manifest("org.leasehold.fixture.minimal", MAIN_ACTIVITY) },
    dangerous: {
      manifest: manifest(
        "org.leasehold.fixture.dangerous",
        `<uses-permission android:name="android.permission.INTERNET"/>
  <uses-permission android:name="android.permission.CAMERA"/>
  <uses-permission android:name="android.permission.READ_CONTACTS"/>
  <uses-permission android:name="android.permission.ACCESS_FINE_LOCATION"/>
  <uses-permission android:name="android.permission.RECORD_AUDIO"/>
  <uses-permission android:name="android.permission.FOREGROUND_SERVICE"/>
  <application android:label="@string/app_name" android:debuggable="true" android:allowBackup="false" android:usesCleartextTraffic="true">
    ${MAIN_ACTIVITY}
    <service android:name=".SyncService">
      <intent-filter><action android:name="org.leasehold.fixture.SYNC"/></intent-filter>
    </service>
    <service android:name=".Uploader" android:process=":upload" android:foregroundServiceType="dataSync" android:exported="false"/>
    <receiver android:name="org.leasehold.fixture.dangerous.BootReceiver" android:exported="true" android:permission="android.permission.RECEIVE_BOOT_COMPLETED">
      <intent-filter><action android:name="android.intent.action.BOOT_COMPLETED"/></intent-filter>
    </receiver>
    <provider android:name=".OpenProvider" android:authorities="org.leasehold.fixture.open" android:exported="true"/>
    <provider android:name=".PrivateProvider" android:authorities="org.leasehold.fixture.private"/>
  </application>`,
        { sdk: [21, 30] },
      ),
      sign: "v1v2v3",
    },
    secure_env: {
      manifest: manifest(
        "org.leasehold.fixture.secureenv",
        `${MAIN_ACTIVITY}
    <property android:name="REQUIRE_SECURE_ENV" android:value="1"/>`,
      ),
    },
    native_aligned: {
      manifest: manifest("org.leasehold.fixture.nativeok", MAIN_ACTIVITY),
      files: { "lib/arm64-v8a/libgood.so": buildElf64({ machine: EM_AARCH64, loadAlign: 16384 }) },
      align: "all16k",
    },
    native_misaligned: {
      manifest: manifest("org.leasehold.fixture.nativebad", MAIN_ACTIVITY),
      files: {
        "lib/arm64-v8a/libold.so": buildElf64({ machine: EM_AARCH64, loadAlign: 4096 }),
        "lib/arm64-v8a/libnew.so": buildElf64({ machine: EM_AARCH64, loadAlign: 16384 }),
      },
      align: "page4k",
    },
    // targetSdk 29: from 30 on, Android (and apksigner verify) demand v2 or later.
    v1_only: { manifest: manifest("org.leasehold.fixture.v1", MAIN_ACTIVITY, { sdk: [21, 29] }), sign: "v1" },
    v2v3: { manifest: manifest("org.leasehold.fixture.v2v3", MAIN_ACTIVITY), sign: "v2v3" },
    flutter: {
      manifest: manifest("org.leasehold.fixture.flutter", MAIN_ACTIVITY),
      files: {
        "lib/arm64-v8a/libflutter.so": buildElf64({ machine: EM_AARCH64, loadAlign: 16384 }),
        "lib/arm64-v8a/libapp.so": buildElf64({ machine: EM_AARCH64, loadAlign: 16384, payload: Buffer.from("\0_kDartVmSnapshotData\0_kDartVmSnapshotInstructions\0") }),
        "assets/flutter_assets/AssetManifest.json": "{}",
      },
      align: "all16k",
    },
    hermes: {
      manifest: manifest("org.leasehold.fixture.hermes", MAIN_ACTIVITY),
      files: {
        "lib/arm64-v8a/libhermes.so": buildElf64({ machine: EM_AARCH64, loadAlign: 16384 }),
        "assets/index.android.bundle": Buffer.concat([hermesMagic, Buffer.alloc(120)]),
      },
      align: "all16k",
    },
    feature_split: {
      manifest: manifest("org.leasehold.fixture.minimal", "", { manifestAttrs: 'split="feature_camera" android:isFeatureSplit="true"', appAttrs: 'android:hasCode="false"' }),
    },
  };
}

function builderHash(): string {
  const h = createHash("sha256");
  for (const f of ["fixtures.ts", "elf.ts"]) h.update(readFileSync(join(HERE, f)));
  return h.digest("hex").slice(0, 16);
}

function buildAll(dir: string): void {
  const keystore = join(dir, "signing.p12");
  run("keytool", ["-genkeypair", "-keystore", keystore, "-storetype", "PKCS12", "-storepass", KEY_PASSWORD, "-keypass", KEY_PASSWORD, "-alias", "fixture", "-keyalg", "RSA", "-keysize", "2048", "-validity", "3650", "-dname", "CN=Leasehold Fixture, O=Leasehold"], dir);
  for (const [name, spec] of Object.entries(specs()) as [FixtureName, Spec][]) {
    const work = join(dir, `work-${name}`);
    mkdirSync(join(work, "res/values"), { recursive: true });
    writeFileSync(join(work, "AndroidManifest.xml"), spec.manifest);
    writeFileSync(join(work, "res/values/strings.xml"), `<resources><string name="app_name">${name}</string></resources>\n`);
    const raw = join(work, "raw");
    mkdirSync(raw);
    for (const [file, content] of Object.entries(spec.files ?? {})) {
      mkdirSync(dirname(join(raw, file)), { recursive: true });
      writeFileSync(join(raw, file), content);
    }
    const unaligned = join(work, "unaligned.apk");
    // -0 so: native libraries stored uncompressed, as a page-aligned APK needs them.
    run("aapt", ["package", "-f", "-0", "so", "-M", "AndroidManifest.xml", "-S", "res", "-I", FRAMEWORK_RES, "-F", unaligned, raw], work);
    let current = unaligned;
    if (spec.align !== undefined) {
      const aligned = join(work, "aligned.apk");
      if (spec.align === "all16k") run("zipalign", ["-f", "16384", unaligned, aligned], work);
      else run("zipalign", ["-f", "-p", "4", unaligned, aligned], work);
      current = aligned;
    }
    if (spec.sign !== undefined) {
      const signed = join(work, "signed.apk");
      const v1 = spec.sign === "v1" || spec.sign === "v1v2v3";
      const v23 = spec.sign !== "v1";
      run("apksigner", ["sign", "--ks", keystore, "--ks-pass", `pass:${KEY_PASSWORD}`, "--ks-key-alias", "fixture", "--min-sdk-version", v1 ? "21" : "24", "--v1-signing-enabled", String(v1), "--v2-signing-enabled", String(v23), "--v3-signing-enabled", String(v23), "--v4-signing-enabled", "false", "--out", signed, current], work);
      current = signed;
    }
    renameSync(current, join(dir, `${name}.apk`));
    rmSync(work, { recursive: true, force: true });
  }
  writeFileSync(join(dir, "complete"), "");
}

let cached: Promise<Record<FixtureName, string>> | null = null;

/** Paths of the built fixture APKs (building them on first use). Also the keystore: `keystore`. */
export function apkFixtures(): Promise<Record<FixtureName, string>> {
  cached ??= Promise.resolve().then(() => {
    const dir = join(tmpdir(), `leasehold-apk-fixtures-${builderHash()}`);
    if (!existsSync(join(dir, "complete"))) {
      ensureAndroidTools();
      const staging = mkdtempSync(join(tmpdir(), "leasehold-apk-build-"));
      buildAll(staging);
      try {
        renameSync(staging, dir);
      } catch {
        // Another test process finished first; its copy is identical.
        rmSync(staging, { recursive: true, force: true });
      }
      if (!existsSync(join(dir, "complete"))) throw new Error(`APK fixtures at ${dir} are incomplete`);
    }
    return Object.fromEntries(FIXTURE_NAMES.map((n) => [n, join(dir, `${n}.apk`)])) as Record<FixtureName, string>;
  });
  return cached;
}

/** SHA-256 certificate digests as apksigner itself prints them — an independent reading. */
export function apksignerCertDigests(apk: string): string[] {
  const out = run("apksigner", ["verify", "--print-certs", apk], dirname(apk));
  return [...out.matchAll(/certificate SHA-256 digest: ([0-9a-f]{64})/g)].map((m) => m[1]!);
}
