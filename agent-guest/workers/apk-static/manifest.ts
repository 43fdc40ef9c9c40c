// Facts from the decoded AndroidManifest.xml. Each fact says whether it was
// read (observed) or filled in by a platform default (derived, naming the
// facts the default depends on, usually the target SDK). The defaults are
// Android's documented ones; where a rule changed with an API level, the rule
// is written next to the code that applies it.

import { ATTR, type AttrName } from "./android-attrs";
import { attributeValue, type AxmlAttribute, type AxmlElement } from "./axml";
import type { FactSet, Limitations } from "./facts";
import { DANGEROUS_PERMISSIONS, DANGEROUS_PERMISSIONS_SOURCE } from "./permissions";

const MANIFEST = "AndroidManifest.xml";
const COMPONENT_KINDS = ["activity", "activity-alias", "service", "receiver", "provider"] as const;
type ComponentKind = (typeof COMPONENT_KINDS)[number];

/**
 * An android: attribute, by resource id only — as the platform's parser
 * reads it. A name-only "android:exported" (no id in the resource map) is
 * ignored by Android, so it is ignored here too: a tool that matched names
 * would report what the device never applies.
 */
export function androidAttr(el: AxmlElement, name: AttrName): AxmlAttribute | undefined {
  const id = ATTR[name];
  return el.attributes.find((a) => a.resourceId === id);
}

function plainAttr(el: AxmlElement, name: string): AxmlAttribute | undefined {
  return el.attributes.find((a) => a.namespace === null && a.name === name && a.resourceId === null);
}

function value(a: AxmlAttribute | undefined): string | number | boolean | null | undefined {
  return a === undefined ? undefined : attributeValue(a);
}

function str(a: AxmlAttribute | undefined): string | undefined {
  const v = value(a);
  return v === undefined || v === null ? undefined : String(v);
}

function bool(a: AxmlAttribute | undefined): boolean | undefined {
  const v = value(a);
  if (typeof v === "boolean") return v;
  if (v === "true") return true;
  if (v === "false") return false;
  return undefined;
}

function int(a: AxmlAttribute | undefined): number | undefined {
  const v = value(a);
  if (typeof v === "number" && Number.isInteger(v)) return v;
  // A codename target ("Tiramisu") or a numeric string.
  if (typeof v === "string" && /^\d{1,9}$/.test(v)) return Number(v);
  return undefined;
}

function children(el: AxmlElement, name: string): AxmlElement[] {
  return el.children.filter((c) => c.name === name);
}

/** Android's class-name rule: ".Foo" and "Foo" (no dot) are relative to the package. */
export function qualifyClassName(pkg: string | undefined, name: string): string {
  if (pkg === undefined) return name;
  if (name.startsWith(".")) return pkg + name;
  if (!name.includes(".")) return `${pkg}.${name}`;
  return name;
}

export interface ComponentFact {
  kind: ComponentKind;
  name: string;
  exported: boolean;
  /** "explicit" (android:exported), or the platform rule that implied it. */
  exported_basis: string;
  permission: string | null;
  intent_filters: number;
  process: string | null;
}

export function manifestFacts(root: AxmlElement, facts: FactSet, lim: Limitations): void {
  if (root.name !== "manifest") {
    lim.add(`${MANIFEST} root element is <${root.name}>, not <manifest>`);
    return;
  }
  const pkg = str(plainAttr(root, "package"));
  if (pkg !== undefined) facts.observed("package.name", pkg, `${MANIFEST}: /manifest@package`);
  else lim.add(`${MANIFEST} has no package attribute`);
  const vc = int(androidAttr(root, "versionCode"));
  if (vc !== undefined) facts.observed("package.version_code", vc, `${MANIFEST}: /manifest@android:versionCode`);
  const vn = str(androidAttr(root, "versionName"));
  if (vn !== undefined) facts.observed("package.version_name", vn, `${MANIFEST}: /manifest@android:versionName`);

  const target = sdkFacts(root, facts);
  splitFacts(root, facts);
  permissionFacts(root, facts);

  const app = children(root, "application")[0];
  if (app === undefined) {
    lim.add(`${MANIFEST} has no <application> element`);
    return;
  }
  applicationFacts(app, target, facts);
  componentFacts(app, pkg, target, facts, lim);
}

/** Returns the target SDK the defaults below depend on (fact id "sdk.target"). */
function sdkFacts(root: AxmlElement, facts: FactSet): number {
  const usesSdk = children(root, "uses-sdk")[0];
  const min = usesSdk === undefined ? undefined : int(androidAttr(usesSdk, "minSdkVersion"));
  const target = usesSdk === undefined ? undefined : int(androidAttr(usesSdk, "targetSdkVersion"));
  let minValue: number;
  if (min !== undefined) {
    facts.observed("sdk.min", min, `${MANIFEST}: /manifest/uses-sdk@android:minSdkVersion`);
    minValue = min;
  } else {
    facts.derived("sdk.min", 1, "platform default: minSdkVersion absent means 1", []);
    minValue = 1;
  }
  if (target !== undefined) {
    facts.observed("sdk.target", target, `${MANIFEST}: /manifest/uses-sdk@android:targetSdkVersion`);
    return target;
  }
  facts.derived("sdk.target", minValue, "platform default: targetSdkVersion absent means minSdkVersion", ["sdk.min"]);
  return minValue;
}

function splitFacts(root: AxmlElement, facts: FactSet): void {
  const split = str(plainAttr(root, "split"));
  const configFor = str(plainAttr(root, "configForSplit"));
  const feature = bool(androidAttr(root, "isFeatureSplit"));
  const required = str(androidAttr(root, "requiredSplitTypes"));
  const types = str(androidAttr(root, "splitTypes"));
  const splitRequired = bool(androidAttr(root, "isSplitRequired"));
  const from: string[] = [];
  if (split !== undefined) {
    facts.observed("split.name", split, `${MANIFEST}: /manifest@split`);
    from.push("split.name");
  }
  if (configFor !== undefined) {
    facts.observed("split.config_for_split", configFor, `${MANIFEST}: /manifest@configForSplit`);
    from.push("split.config_for_split");
  }
  if (feature !== undefined) {
    facts.observed("split.is_feature_split", feature, `${MANIFEST}: /manifest@android:isFeatureSplit`);
    from.push("split.is_feature_split");
  }
  if (required !== undefined) {
    facts.observed("split.required_split_types", required.split(",").filter(Boolean), `${MANIFEST}: /manifest@android:requiredSplitTypes`);
    from.push("split.required_split_types");
  }
  if (types !== undefined) {
    facts.observed("split.split_types", types.split(",").filter(Boolean), `${MANIFEST}: /manifest@android:splitTypes`);
    from.push("split.split_types");
  }
  if (splitRequired !== undefined) {
    facts.observed("split.is_split_required", splitRequired, `${MANIFEST}: /application@android:isSplitRequired`);
    from.push("split.is_split_required");
  }
  // A split APK carries a split name; "config.*" names are configuration
  // splits (ABI, density, language) of the base or of a feature split.
  let kind: string;
  if (split === undefined) kind = "base";
  else if (feature === true) kind = "feature";
  else if (split.startsWith("config.")) kind = "config";
  else kind = "split";
  const needsOthers = split !== undefined || (required !== undefined && required.length > 0) || splitRequired === true;
  facts.derived("split.kind", kind, "manifest split attributes: no split name → base APK; isFeatureSplit → feature; config.* → configuration split", from);
  facts.derived("split.incomplete", needsOthers, "a split, or a base declaring required split types, cannot be installed alone", from);
}

function permissionFacts(root: AxmlElement, facts: FactSet): void {
  const names: string[] = [];
  for (const tag of ["uses-permission", "uses-permission-sdk-23", "uses-permission-sdk-m"]) {
    for (const el of children(root, tag)) {
      const n = str(androidAttr(el, "name"));
      if (n !== undefined && !names.includes(n)) names.push(n);
    }
  }
  facts.observed("permissions.requested", names, `${MANIFEST}: /manifest/uses-permission@android:name`);
  facts.derived(
    "permissions.dangerous",
    names.filter((n) => DANGEROUS_PERMISSIONS.has(n)),
    DANGEROUS_PERMISSIONS_SOURCE,
    ["permissions.requested"],
  );
}

function applicationFacts(app: AxmlElement, target: number, facts: FactSet): void {
  const where = `${MANIFEST}: /manifest/application`;
  const flag = (id: string, attr: AttrName, dflt: boolean, rule: string, from: string[]): void => {
    const v = bool(androidAttr(app, attr));
    if (v !== undefined) facts.observed(id, v, `${where}@android:${attr}`);
    else facts.derived(id, dflt, `platform default (attribute absent): ${rule}`, from);
  };
  flag("application.debuggable", "debuggable", false, "not debuggable", []);
  flag("application.allow_backup", "allowBackup", true, "backup allowed", []);
  flag(
    "application.uses_cleartext_traffic",
    "usesCleartextTraffic",
    target < 28,
    `cleartext allowed below targetSdk 28, refused from 28 (target ${target})`,
    ["sdk.target"],
  );
  const nsc = value(androidAttr(app, "networkSecurityConfig"));
  if (nsc !== undefined) facts.observed("application.network_security_config", nsc, `${where}@android:networkSecurityConfig (not evaluated; it can override cleartext rules per domain)`);

  const secure = children(app, "property").find((p) => str(androidAttr(p, "name")) === "REQUIRE_SECURE_ENV");
  if (secure === undefined) {
    facts.observed("manifest.require_secure_env", false, `${where}/property[@android:name='REQUIRE_SECURE_ENV'] absent`);
  } else {
    const v = value(androidAttr(secure, "value"));
    facts.observed("manifest.require_secure_env", v === 1 || v === true || v === "1" || v === "true", `${where}/property[@android:name='REQUIRE_SECURE_ENV']@android:value = ${JSON.stringify(v ?? null)}`);
  }
  const meta = children(app, "meta-data")
    .map((m) => str(androidAttr(m, "name")))
    .filter((n): n is string => n !== undefined);
  facts.observed("application.meta_data_names", meta.slice(0, 500), `${where}/meta-data@android:name`);
}

/** Components reported one by one; beyond this the output would outgrow any sandbox output cap. */
export const MAX_COMPONENT_FACTS = 5000;

function componentFacts(app: AxmlElement, pkg: string | undefined, target: number, facts: FactSet, lim: Limitations): void {
  const appPermission = str(androidAttr(app, "permission")) ?? null;
  const appProcess = str(androidAttr(app, "process")) ?? null;
  const withoutPermission: string[] = [];
  const processes = new Set<string>();
  if (appProcess !== null) processes.add(appProcess);
  const foreground: string[] = [];
  const jobServices: string[] = [];
  const seen = new Set<string>();
  for (const el of app.children) {
    const kind = (COMPONENT_KINDS as readonly string[]).includes(el.name) ? (el.name as ComponentKind) : null;
    if (kind === null) continue;
    const rawName = str(androidAttr(el, "name"));
    if (rawName === undefined) continue;
    const name = qualifyClassName(pkg, rawName);
    const id = `component.${kind}:${name}`;
    if (seen.has(id)) continue;
    if (seen.size >= MAX_COMPONENT_FACTS) {
      lim.add(`more than ${MAX_COMPONENT_FACTS} components; the rest are not reported`);
      break;
    }
    seen.add(id);
    const filters = children(el, "intent-filter").length;
    const explicit = bool(androidAttr(el, "exported"));
    let permission = str(androidAttr(el, "permission")) ?? null;
    if (kind === "provider" && permission === null) {
      const r = str(androidAttr(el, "readPermission"));
      const w = str(androidAttr(el, "writePermission"));
      if (r !== undefined && w !== undefined) permission = `read:${r} write:${w}`;
    }
    // An application-wide android:permission applies to components without their own.
    if (permission === null && kind !== "provider") permission = appPermission;
    const proc = str(androidAttr(el, "process")) ?? null;
    if (proc !== null) processes.add(proc);
    if (kind === "service") {
      if (androidAttr(el, "foregroundServiceType") !== undefined) foreground.push(name);
      if (permission === "android.permission.BIND_JOB_SERVICE") jobServices.push(name);
    }
    let exported: boolean;
    let basis: string;
    if (explicit !== undefined) {
      exported = explicit;
      basis = "explicit";
    } else if (kind === "provider") {
      // Providers were exported by default up to API 16 (Jelly Bean 4.1).
      exported = target <= 16;
      basis = `provider default: exported when targetSdk <= 16 (target ${target})`;
    } else {
      exported = filters > 0;
      basis =
        target >= 31 && filters > 0
          ? `implied by ${filters} intent-filter(s); from targetSdk 31 Android refuses to install a component with an intent-filter and no explicit android:exported`
          : `implied: ${filters > 0 ? "has" : "no"} intent-filter (targetSdk ${target})`;
    }
    const fact: ComponentFact = { kind, name, exported, exported_basis: basis, permission, intent_filters: filters, process: proc };
    const where = `${MANIFEST}: /manifest/application/${kind}[@android:name='${rawName}']`;
    if (explicit !== undefined) facts.observed(id, fact, where);
    else facts.derived(id, fact, `${where}; ${basis}`, ["sdk.target"]);
    if (exported && permission === null) withoutPermission.push(id);
  }
  facts.derived("components.exported_without_permission", withoutPermission, "exported components that no android:permission guards", withoutPermission);
  facts.observed("application.processes", [...processes], `${MANIFEST}: android:process of application and components`);
  facts.observed("services.foreground", foreground, `${MANIFEST}: service@android:foregroundServiceType`);
  facts.observed("services.job", jobServices, `${MANIFEST}: service@android:permission = BIND_JOB_SERVICE`);
}
