export { Scrubber, scrubBuffer, createScrubStream, redactionMarker } from "./scrubber";
export type { RedactionReport, RedactionSpan, ScrubberOptions, EndOptions } from "./scrubber";
export { scrubPair, cutScrubbed } from "./pair";
export type { PairInput, ScrubbedPair } from "./pair";
export { BUILTIN_PATTERNS, BUILTIN_KINDS, DLP_LIMITS, DlpPatternConfig, compileDlpPatterns } from "./patterns";
export type { CompiledPattern } from "./patterns";
export { analyzeRegex, RegexRefused } from "./regex-bounds";
export type { RegexBounds, AnalyzeOptions } from "./regex-bounds";
