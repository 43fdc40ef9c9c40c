// Every bound the worker keeps, in one place, so the README's memory figure
// and the code cannot drift apart. A hostile APK controls every length field;
// each read is sized by one of these, never by the archive alone.

export interface InspectLimits {
  /** Largest central directory read into memory. */
  maxCentralDirectoryBytes: number;
  /** Most entries listed; more → refused (a real APK has a few thousand). */
  maxEntries: number;
  /** Longest entry name kept; longer names are reported, not used. */
  maxNameBytes: number;
  /** Largest single entry inflated in full (manifest, certificate files). */
  maxEntryBytes: number;
  /** Sum of bytes inflated over the whole run (zip bomb budget). */
  maxTotalInflatedBytes: number;
  /** Declared uncompressed/compressed ratio above which an entry is not inflated. */
  maxCompressionRatio: number;
  /** Largest APK Signing Block read. */
  maxSigningBlockBytes: number;
  /** Bytes of a large entry inspected for a header or magic. */
  prefixBytes: number;
  /** AXML string pool: most strings, longest string (UTF-16 units). */
  maxStrings: number;
  maxStringChars: number;
  /** AXML: most elements, deepest nesting, most attributes on one element. */
  maxElements: number;
  maxDepth: number;
  maxAttributes: number;
  /** Most native libraries examined one by one. */
  maxNativeLibraries: number;
}

export const DEFAULT_LIMITS: Readonly<InspectLimits> = Object.freeze({
  maxCentralDirectoryBytes: 32 * 1024 * 1024,
  maxEntries: 100_000,
  maxNameBytes: 4096,
  maxEntryBytes: 8 * 1024 * 1024,
  maxTotalInflatedBytes: 64 * 1024 * 1024,
  maxCompressionRatio: 200,
  maxSigningBlockBytes: 16 * 1024 * 1024,
  prefixBytes: 64 * 1024,
  maxStrings: 200_000,
  maxStringChars: 65_536,
  maxElements: 100_000,
  maxDepth: 256,
  maxAttributes: 1024,
  maxNativeLibraries: 2000,
});
