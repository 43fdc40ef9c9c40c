export { Scrubber, scrubBuffer, createScrubStream } from "./scrubber";
export type { RedactionReport, ScrubberOptions } from "./scrubber";
export { BUILTIN_PATTERNS, BUILTIN_KINDS, DLP_LIMITS, DlpPatternConfig, compileDlpPatterns } from "./patterns";
export type { CompiledPattern } from "./patterns";
export { analyzeRegex, RegexRefused } from "./regex-bounds";
export type { RegexBounds, AnalyzeOptions } from "./regex-bounds";
