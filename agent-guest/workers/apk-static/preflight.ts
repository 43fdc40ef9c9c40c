// apk_preflight: Appendix A of the container design (seed 001) as checks
// derived from apk_inspect's facts. A check never guesses: what a static read
// of the manifest and the file list cannot show (Play Integrity use, Keystore
// use, custom signature checks, WebView) is "unknown" with the reason.

import type { Check, Fact } from "./facts";

/**
 * Google Play's target API requirement for new apps and updates (API 35
 * from 31 August 2025). Below it an app is out of date for the Play store
 * and runs with older platform compatibility behaviour a container must emulate.
 */
export const MIN_RECOMMENDED_TARGET_SDK = 35;

/** What the checks read: the facts by id, their values, and which of a list are present. */
interface FactLookup {
  get(id: string): Fact | undefined;
  val<T>(id: string): T | undefined;
  present(ids: string[]): string[];
}

function lookup(facts: readonly Fact[]): FactLookup {
  const byId = new Map(facts.map((f) => [f.id, f]));
  return {
    get: (id) => byId.get(id),
    val: <T>(id: string) => byId.get(id)?.value as T | undefined,
    present: (ids) => ids.filter((id) => byId.has(id)),
  };
}

// Package identity.
function packageIdentity({ val, present }: FactLookup): Check {
  const from = present(["package.name", "package.version_code", "package.version_name"]);
  const name = val<string>("package.name");
  return {
    id: "package.identity",
    title: "packageName / versionCode / versionName",
    status: name === undefined ? "fail" : from.length === 3 ? "pass" : "warn",
    state: "derived",
    detail: name === undefined ? "no package name could be read" : `${name} ${String(val("package.version_code") ?? "(no versionCode)")} ${String(val("package.version_name") ?? "(no versionName)")}`,
    from,
  };
}

// SDK levels.
function sdkLevels({ val, present }: FactLookup): Check {
  const target = val<number>("sdk.target");
  const min = val<number>("sdk.min");
  return {
    id: "sdk.levels",
    title: "minSdk / targetSdk",
    status: target === undefined ? "unknown" : target < MIN_RECOMMENDED_TARGET_SDK ? "warn" : "pass",
    state: "derived",
    detail:
      target === undefined
        ? "the manifest could not be read"
        : `minSdk ${String(min)}, targetSdk ${target}${target < MIN_RECOMMENDED_TARGET_SDK ? ` (below ${MIN_RECOMMENDED_TARGET_SDK}, Google Play's target API requirement since 31 Aug 2025)` : ""}`,
    from: present(["sdk.min", "sdk.target"]),
  };
}

// ABIs.
function abis({ val, present }: FactLookup): Check {
  const abis = val<Record<string, string[]>>("native.abis") ?? {};
  const names = Object.keys(abis);
  return {
    id: "native.abis",
    title: "ABIs (arm64-v8a / armeabi-v7a / x86_64)",
    status: names.length === 0 || names.includes("arm64-v8a") ? "pass" : "warn",
    state: "derived",
    detail: names.length === 0 ? "no native libraries: runs on any ABI" : `native libraries for ${names.join(", ")}${names.includes("arm64-v8a") ? "" : "; no arm64-v8a build"}`,
    from: present(["native.abis"]),
  };
}

// Split APKs.
function splitApks({ val, present }: FactLookup): Check {
  const kind = val<string>("split.kind");
  const incomplete = val<boolean>("split.incomplete");
  const required = val<string[]>("split.required_split_types");
  let status: Check["status"] = "unknown";
  let detail = "the manifest could not be read";
  if (kind !== undefined) {
    if (kind !== "base") {
      status = "fail";
      detail = `this is a ${kind} split (${String(val("split.name"))}), not a base APK: it cannot be installed alone`;
    } else if (incomplete === true) {
      status = "fail";
      detail = `base APK that requires further splits${required !== undefined ? ` (requiredSplitTypes: ${required.join(", ")})` : ""}: install it with its splits`;
    } else {
      status = "pass";
      detail = "base APK that declares no required splits";
    }
  }
  return { id: "split.complete", title: "Split APK (base + config.*)", status, state: "derived", detail, from: present(["split.kind", "split.incomplete", "split.name", "split.required_split_types", "split.is_split_required"]) };
}

// 16 KB alignment.
function alignment16k({ val, present }: FactLookup): Check {
  const a = val<{ libraries: number; aligned: string[]; misaligned: { library: string; reasons: string[] }[]; unknown: { library: string; reason: string }[] }>("native.alignment_16k");
  let status: Check["status"] = "unknown";
  let detail = "no native library facts";
  if (a !== undefined) {
    if (a.misaligned.length > 0) {
      status = "fail";
      detail = a.misaligned.map((m) => `${m.library}: ${m.reasons.join("; ")}`).join(" | ");
    } else if (a.unknown.length > 0) {
      status = "unknown";
      detail = a.unknown.map((u) => `${u.library}: ${u.reason}`).join(" | ");
    } else {
      status = "pass";
      detail = a.libraries === 0 ? "no native libraries" : `${a.aligned.length} libraries 16 KB aligned`;
    }
  }
  return { id: "native.alignment_16k", title: "Native libraries 16 KB aligned (Android 15+)", status, state: "derived", detail, from: present(["native.alignment_16k"]) };
}

// REQUIRE_SECURE_ENV.
function secureEnv({ get, present }: FactLookup): Check {
  const f = get("manifest.require_secure_env");
  return {
    id: "manifest.require_secure_env",
    title: "REQUIRE_SECURE_ENV=1 declared → reject",
    status: f === undefined ? "unknown" : f.value === true ? "fail" : "pass",
    state: "derived",
    detail: f === undefined ? "the manifest could not be read" : f.value === true ? "the app asks not to run in a container (Play container policy): do not load it" : "not declared",
    from: present(["manifest.require_secure_env"]),
  };
}

// GMS / Play Integrity.
function gmsIntegrity({ val, present }: FactLookup): Check {
  const meta = val<string[]>("application.meta_data_names") ?? [];
  const perms = val<string[]>("permissions.requested") ?? [];
  const markers = [
    ...meta.filter((m) => m.startsWith("com.google.android.gms.") || m.startsWith("com.google.firebase.") || m.startsWith("com.google.android.play.")),
    ...perms.filter((p) => p.startsWith("com.google.android.c2dm.") || p.startsWith("com.google.android.finsky.") || p === "com.google.android.gms.permission.AD_ID"),
  ];
  return {
    id: "dependency.gms",
    title: "Depends on GMS / Play Integrity",
    status: markers.length > 0 ? "warn" : "unknown",
    state: "derived",
    detail:
      markers.length > 0
        ? `manifest declares Google Play services markers: ${markers.slice(0, 8).join(", ")}; whether it calls Play Integrity cannot be seen without code analysis`
        : "no GMS markers in the manifest; Play Integrity calls live in the dex code, which this worker does not analyse",
    from: present(["application.meta_data_names", "permissions.requested"]),
  };
}

// Processes, foreground services, JobScheduler.
function processes({ get, val, present }: FactLookup): Check {
  const procs = val<string[]>("application.processes") ?? [];
  const fg = val<string[]>("services.foreground") ?? [];
  const jobs = val<string[]>("services.job") ?? [];
  const perms = val<string[]>("permissions.requested") ?? [];
  const fgPerm = perms.includes("android.permission.FOREGROUND_SERVICE");
  const parts: string[] = [];
  if (procs.length > 0) parts.push(`processes: ${procs.join(", ")}`);
  if (fg.length > 0 || fgPerm) parts.push(`foreground services: ${fg.length > 0 ? fg.join(", ") : "FOREGROUND_SERVICE permission"}`);
  if (jobs.length > 0) parts.push(`JobScheduler services: ${jobs.join(", ")}`);
  return {
    id: "components.background",
    title: "Multiple processes / foreground services / JobScheduler",
    status: get("application.processes") !== undefined ? (parts.length > 0 ? "warn" : "pass") : "unknown",
    state: "derived",
    detail: get("application.processes") !== undefined ? (parts.length > 0 ? parts.join("; ") : "single process, no foreground or job services declared") : "the manifest could not be read",
    from: present(["application.processes", "services.foreground", "services.job", "permissions.requested"]),
  };
}

// Frameworks.
function frameworks({ get, val, present }: FactLookup): Check {
  const detected = val<string[]>("frameworks.detected") ?? [];
  const described = detected.map((id) => {
    const f = get(id);
    return `${(f?.value as { name?: string } | undefined)?.name ?? id} (${f?.state ?? "?"})`;
  });
  return {
    id: "frameworks",
    title: "WebView / Flutter / Unity (affects control method)",
    status: detected.length > 0 ? "warn" : "pass",
    state: detected.some((id) => get(id)?.state === "hypothesized") ? "hypothesized" : "derived",
    detail: detected.length > 0 ? `${described.join(", ")}: UI is drawn by the framework, so accessibility-tree control may not work; WebView use is not detectable statically` : "no cross-platform framework files; WebView use is not detectable statically",
    from: present(["frameworks.detected", ...detected]),
  };
}

// Dangerous permissions.
function dangerousPermissions({ val, present }: FactLookup): Check {
  const d = val<string[]>("permissions.dangerous");
  return {
    id: "permissions.dangerous",
    title: "Dangerous permissions",
    status: d === undefined ? "unknown" : d.length > 0 ? "warn" : "pass",
    state: "derived",
    detail: d === undefined ? "the manifest could not be read" : d.length > 0 ? d.join(", ") : "none requested",
    from: present(["permissions.dangerous"]),
  };
}

// Exported components without a permission.
function exportedComponents({ val, present }: FactLookup): Check {
  const e = val<string[]>("components.exported_without_permission");
  return {
    id: "components.exported_without_permission",
    title: "Exported components without a permission",
    status: e === undefined ? "unknown" : e.length > 0 ? "warn" : "pass",
    state: "derived",
    detail: e === undefined ? "the manifest could not be read" : e.length > 0 ? e.map((id) => id.replace(/^component\./, "")).join(", ") : "none",
    from: present(["components.exported_without_permission"]),
  };
}

// Debuggable.
function debuggable({ get, present }: FactLookup): Check {
  const f = get("application.debuggable");
  return {
    id: "application.debuggable",
    title: "Debuggable build",
    status: f === undefined ? "unknown" : f.value === true ? "warn" : "pass",
    state: "derived",
    detail: f === undefined ? "the manifest could not be read" : f.value === true ? "android:debuggable=true: a development build" : "not debuggable",
    from: present(["application.debuggable"]),
  };
}

// Signatures.
function signatures({ val, present }: FactLookup): Check {
  const schemes = val<string[]>("signing.schemes") ?? [];
  const target = val<number>("sdk.target");
  // Android 11 (API 30) refuses to install an app targeting 30+ that has only a v1 signature.
  const v1OnlyTooNew = schemes.length === 1 && schemes[0] === "v1" && target !== undefined && target >= 30;
  let detail: string;
  if (schemes.length === 0) detail = "no v1 signature files and no APK Signing Block: Android will not install it";
  else if (v1OnlyTooNew) detail = `only a v1 (JAR) signature with targetSdk ${target}: Android 11+ requires v2 or later for targetSdk >= 30`;
  else detail = `signature schemes present: ${schemes.join(", ")} (not cryptographically verified here; whether the signer is trusted is for the reviewer to decide from the certificate digests)`;
  return {
    id: "signing.present",
    title: "Installation package signatures",
    status: schemes.length === 0 || v1OnlyTooNew ? "fail" : "pass",
    state: "derived",
    detail,
    from: present(["signing.schemes", ...(v1OnlyTooNew ? ["sdk.target"] : [])]),
  };
}

// What a static read cannot show: always "unknown", with the reason (a fresh object per report).
function keystore(): Check {
  return { id: "dependency.keystore", title: "Uses Android Keystore", status: "unknown", state: "derived", detail: "Keystore use is in the dex code, which this worker does not analyse", from: [] };
}

function signatureChecks(): Check {
  return {
    id: "dependency.signature_checks",
    title: "Custom signature verification",
    status: "unknown",
    state: "derived",
    detail: "self-checks of the signature are in the dex or native code, which this worker does not analyse",
    from: [],
  };
}

/** In report order. */
const CHECKS: readonly ((facts: FactLookup) => Check)[] = [
  packageIdentity,
  sdkLevels,
  abis,
  splitApks,
  alignment16k,
  secureEnv,
  gmsIntegrity,
  keystore,
  signatureChecks,
  processes,
  frameworks,
  dangerousPermissions,
  exportedComponents,
  debuggable,
  signatures,
];

export function preflight(facts: readonly Fact[]): Check[] {
  const f = lookup(facts);
  return CHECKS.map((check) => check(f));
}
