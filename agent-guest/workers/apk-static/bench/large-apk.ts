// A real aapt APK of a chosen size for the benchmarks (worker-only here, end
// to end in agent-guest/bench/apk-e2e.bench.ts): stored random data, deflated
// text and 16 KB-aligned native libraries, zipaligned and v2/v3-signed with
// the fixtures' key.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EM_AARCH64, buildElf64 } from "../test/elf";
import { FRAMEWORK_RES, KEY_PASSWORD } from "../test/fixtures";

/** A real aapt APK padded to about `megabytes` MB: stored random data, deflated text, native libraries; zipaligned and v2/v3-signed. */
export function makeApk(dir: string, megabytes: number, keystore: string): string {
  const work = join(dir, `w${megabytes}`);
  mkdirSync(join(work, "res/values"), { recursive: true });
  mkdirSync(join(work, "raw/assets"), { recursive: true });
  mkdirSync(join(work, "raw/lib/arm64-v8a"), { recursive: true });
  writeFileSync(
    join(work, "AndroidManifest.xml"),
    `<?xml version="1.0" encoding="utf-8"?>
<manifest xmlns:android="http://schemas.android.com/apk/res/android" package="org.leasehold.bench.m${megabytes}" android:versionCode="1" android:versionName="1.0">
  <uses-sdk android:minSdkVersion="24" android:targetSdkVersion="35"/>
  <uses-permission android:name="android.permission.CAMERA"/>
  <application android:label="@string/app_name"><activity android:name=".Main" android:exported="true"/></application>
</manifest>
`,
  );
  writeFileSync(join(work, "res/values/strings.xml"), `<resources><string name="app_name">bench</string></resources>\n`);
  const total = megabytes * 1024 * 1024;
  // About 40% incompressible stored data, 40% native libraries, 20% deflated text.
  writeFileSync(join(work, "raw/assets/stored.bin"), randomBytes(Math.floor(total * 0.4)));
  const libs = 8;
  for (let i = 0; i < libs; i++) {
    writeFileSync(join(work, `raw/lib/arm64-v8a/libbench${i}.so`), buildElf64({ machine: EM_AARCH64, loadAlign: 16384, payload: randomBytes(Math.floor((total * 0.4) / libs)) }));
  }
  const line = "the quick brown fox jumps over the lazy dog; ";
  const text: string[] = [];
  for (let n = 0; n < total * 0.2 * 8; n += line.length + 12) text.push(line, randomBytes(6).toString("hex"));
  writeFileSync(join(work, "raw/assets/deflated.txt"), text.join(""));
  const unaligned = join(work, "u.apk");
  execFileSync("aapt", ["package", "-f", "-0", "so", "-0", "bin", "-M", "AndroidManifest.xml", "-S", "res", "-I", FRAMEWORK_RES, "-F", unaligned, "raw"], { cwd: work, stdio: "ignore" });
  const aligned = join(work, "a.apk");
  execFileSync("zipalign", ["-f", "16384", unaligned, aligned], { stdio: "ignore" });
  const out = join(dir, `bench-${megabytes}mb.apk`);
  execFileSync("apksigner", ["sign", "--ks", keystore, "--ks-pass", `pass:${KEY_PASSWORD}`, "--ks-key-alias", "fixture", "--out", out, aligned], { stdio: "ignore" });
  rmSync(work, { recursive: true, force: true });
  return out;
}
