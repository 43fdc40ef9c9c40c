// apk_inspect: one pass over the archive, in a fixed order — ZIP structure,
// manifest, signing, native libraries, frameworks — each step adding facts
// or limitations. Only the ZIP structure itself can refuse the input; every
// later step degrades to a limitation, so a damaged APK still yields what can
// be read from it.

import { createHash } from "node:crypto";
import { AxmlError, parseAxml } from "./axml";
import { FactSet, Limitations, type Fact } from "./facts";
import { frameworkFacts } from "./frameworks";
import { DEFAULT_LIMITS, type InspectLimits } from "./limits";
import { manifestFacts } from "./manifest";
import { nativeFacts } from "./native";
import { signingFacts } from "./signing";
import { type ByteSource, FdSource, withFileSource } from "./source";
import { ReadBudget, openZip, readEntry } from "./zip";

export interface InspectResult {
  artifact: { sha256: string; bytes: number };
  facts: Fact[];
  limitations: string[];
}

export interface InspectOptions {
  limits?: Partial<InspectLimits>;
}

function sha256Of(src: ByteSource): string {
  // One reused 1 MiB buffer: hashing a 50 MB APK must not allocate 50 MB.
  const h = createHash("sha256");
  const chunk = Buffer.allocUnsafe(1024 * 1024);
  for (let at = 0; at < src.size; ) {
    const n = src.readInto(at, chunk);
    if (n === 0) break;
    h.update(chunk.subarray(0, n));
    at += n;
  }
  return h.digest("hex");
}

export function inspectSource(src: ByteSource, opts: InspectOptions = {}): InspectResult {
  const limits: InspectLimits = { ...DEFAULT_LIMITS, ...opts.limits };
  const lim = new Limitations();
  const facts = new FactSet();
  const artifact = { sha256: sha256Of(src), bytes: src.size };
  const zip = openZip(src, limits, lim);
  const budget = new ReadBudget(limits.maxTotalInflatedBytes);

  facts.observed(
    "zip.entries",
    { count: zip.entries.length, zip64: zip.zip64, unsafe_names: zip.unsafeNames, duplicate_names: zip.duplicateNames },
    "ZIP central directory",
  );
  if (zip.unsafeNames.length > 0) lim.add(`${zip.unsafeNames.length} entry names are absolute, contain "..", a backslash or NUL; they are reported, never used as paths`);
  if (zip.duplicateNames.length > 0) lim.add(`duplicate entry names (the first of each is read): ${zip.duplicateNames.slice(0, 5).map((n) => JSON.stringify(n)).join(", ")}`);

  const manifestEntry = zip.byName.get("AndroidManifest.xml");
  if (manifestEntry === undefined) {
    lim.add("no AndroidManifest.xml entry: not an APK, or a damaged one; manifest facts are missing");
  } else {
    const bytes = readEntry(zip, manifestEntry, limits, budget, lim);
    if (bytes !== null) {
      try {
        const doc = parseAxml(bytes, limits);
        if (doc.root === null) lim.add("AndroidManifest.xml has no root element");
        else manifestFacts(doc.root, facts, lim);
      } catch (err) {
        if (!(err instanceof AxmlError)) throw err;
        lim.add(`AndroidManifest.xml is not valid binary XML: ${err.message}; manifest facts are missing`);
      }
    }
  }
  signingFacts(zip, limits, budget, facts, lim);
  nativeFacts(zip, limits, budget, facts, lim);
  frameworkFacts(zip, limits, budget, facts, lim);
  if (facts.get("package.name") === undefined) lim.add("package identity unknown");
  return { artifact, facts: facts.facts, limitations: lim.list() };
}

/** Inspects an APK given as a path (opened read-only) or an already open descriptor. */
export function inspectApk(input: string | number, opts: InspectOptions = {}): InspectResult {
  if (typeof input === "number") return inspectSource(new FdSource(input), opts);
  return withFileSource(input, (src) => inspectSource(src, opts));
}
