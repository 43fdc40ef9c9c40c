/**
 * The scrubber as it was before issue 12 (commit b67aaac), kept only so the
 * bench can measure the current engine against it in the same run. Not used
 * by anything else.
 */
import { z } from "zod";
import { LeaseholdError } from "../../../../server/trust";
import { analyzeRegex, RegexRefused, type RegexBounds } from "../../regex-bounds";

/**
 * The patterns the scrubber applies, and the validation of operator-supplied
 * DLP patterns. Everything is matched over bytes viewed as latin1 characters
 * (one byte = one UTF-16 code unit), so patterns are ASCII and offsets are
 * byte offsets.
 */

export interface CompiledPattern {
  /** The word in `[REDACTED:<kind>]` and in the redaction report. */
  kind: string;
  /** Global (and `d` when the pattern redacts only its `s` group). */
  regex: RegExp;
  /**
   * Matches at the first bytes of every possible match (a literal prefix),
   * or null when a match may start anywhere. Lets the stream release bytes
   * that cannot begin a match instead of always holding back maxLength.
   */
  trigger: RegExp | null;
  /** Longest string `trigger` can match. */
  triggerLength: number;
  bounds: RegexBounds;
  /** Only the named group `s` is replaced; the rest of the match (e.g. `Bearer `) passes. */
  secretGroup: boolean;
  /**
   * Applies only when a match of `kind` ended at most `window` bytes before
   * this match starts (AWS secret keys have no format of their own; a
   * 40-character string right after an access key id is one).
   */
  near: { kind: string; window: number } | null;
  source: "builtin" | "dlp";
}

interface BuiltinSpec {
  kind: string;
  pattern: string;
  flags?: "i";
  trigger: string | null;
  triggerLength: number;
  near?: { kind: string; window: number };
}

// Token alphabets and boundaries. Boundaries are one-byte look-behinds so a
// token embedded in a longer identifier is not mistaken for one.
const WS = "\\t\\n\\r ";

/**
 * Order matters only for ties (two kinds matching at the same byte): the
 * earlier entry wins. Otherwise the leftmost match wins, as one alternation would.
 */
const BUILTIN_SPECS: readonly BuiltinSpec[] = [
  {
    // Multi-line; with no END line within 16 KiB (truncated output) we still
    // redact the base64 body that follows so a cut-off key does not leak.
    kind: "private_key",
    pattern:
      "-----BEGIN (?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY(?: BLOCK)?-----" +
      "(?:[\\s\\S]{0,16384}?-----END (?:[A-Z0-9]{1,16} ){0,3}PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\\t\\r\\n :,.-]{0,16384})",
    trigger: "-----BEGIN ",
    triggerLength: 11,
  },
  {
    kind: "jwt",
    pattern: "(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,4096}\\.eyJ[A-Za-z0-9_-]{2,8192}\\.[A-Za-z0-9_-]{0,2048}",
    trigger: "eyJ",
    triggerLength: 3,
  },
  {
    kind: "aws_access_key",
    pattern: "(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA)[A-Z0-9]{16}(?![A-Za-z0-9])",
    trigger: "A(?:KIA|SIA|BIA|CCA|GPA|IDA|IPA|NPA|NVA|PKA|ROA)",
    triggerLength: 4,
  },
  {
    kind: "aws_secret_key",
    pattern:
      "(?<![A-Za-z0-9])(?:aws[_-]?secret[_-]?access[_-]?key|aws[_-]?secret[_-]?key|secret[_-]?access[_-]?key)[\"']?" +
      "[\\t ]{0,8}(?:=>|=|:)[\\t ]{0,8}[\"']?(?<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
    flags: "i",
    trigger: "aws[_-]?secret|secret[_-]?access",
    triggerLength: 13,
  },
  {
    kind: "aws_secret_key",
    pattern: "(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
    trigger: null,
    triggerLength: 0,
    near: { kind: "aws_access_key", window: 256 },
  },
  {
    kind: "github_token",
    pattern: "(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,244})",
    trigger: "gh[pousr]_|github_pat_",
    triggerLength: 11,
  },
  {
    kind: "gitlab_token",
    pattern: "(?<![A-Za-z0-9_-])gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent)-[A-Za-z0-9_-]{20,255}",
    trigger: "gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent)-",
    triggerLength: 8,
  },
  {
    kind: "slack_token",
    pattern: "(?<![A-Za-z0-9-])(?:xox[abposer]-[A-Za-z0-9-]{10,250}|xapp-[0-9]-[A-Za-z0-9-]{10,250})",
    trigger: "xox[abposer]-|xapp-",
    triggerLength: 5,
  },
  {
    kind: "slack_webhook",
    pattern: "https://hooks\\.slack\\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,200}",
    trigger: "https://hooks\\.slack\\.com/",
    triggerLength: 24,
  },
  {
    kind: "stripe_key",
    pattern: "(?<![A-Za-z0-9_])(?:[sr]k_(?:live|test)_[A-Za-z0-9]{16,247}|whsec_[A-Za-z0-9]{24,128})",
    trigger: "[sr]k_(?:live|test)_|whsec_",
    triggerLength: 8,
  },
  {
    kind: "google_api_key",
    pattern: "(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])",
    trigger: "AIza",
    triggerLength: 4,
  },
  {
    kind: "google_oauth_token",
    pattern: "(?<![A-Za-z0-9_-])(?:ya29\\.[0-9A-Za-z_-]{20,2048}|GOCSPX-[A-Za-z0-9_-]{28})",
    trigger: "ya29\\.|GOCSPX-",
    triggerLength: 7,
  },
  {
    // The hub's own agent tokens (server/tokens/secret.ts: lh_ + 32 base64url).
    kind: "leasehold_token",
    pattern: "(?<![A-Za-z0-9_])lh_[A-Za-z0-9_-]{32,128}",
    trigger: "lh_",
    triggerLength: 3,
  },
  {
    // Only the password is replaced; `scheme://user:` and `@host` stay readable.
    // The password runs to the LAST '@' before whitespace or '/', so a raw '@'
    // inside it is still covered.
    kind: "connection_string_password",
    pattern:
      "(?<![A-Za-z0-9+.-])(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\\+srv)?|rediss?|amqps?|mssql|sqlserver)" +
      `://[^${WS}/:@]{0,256}:(?<s>[^${WS}/]{1,256})@`,
    flags: "i",
    trigger: "postgres|mysql|mariadb|mongodb|redis|amqp|mssql|sqlserver",
    triggerLength: 9,
  },
  {
    kind: "url_password",
    pattern: `(?<![A-Za-z0-9+.-])(?:https?|ftps?)://[^${WS}/:@]{0,256}:(?<s>[^${WS}/]{1,256})@`,
    flags: "i",
    trigger: "https?:|ftps?:",
    triggerLength: 6,
  },
  {
    kind: "bearer_token",
    pattern: "(?<![A-Za-z0-9_-])Bearer[\\t ]{1,8}(?<s>[A-Za-z0-9._~+/=_-]{16,2048})",
    flags: "i",
    trigger: "bearer",
    triggerLength: 6,
  },
  {
    kind: "basic_auth",
    pattern: "(?<![A-Za-z0-9_-])Authorization[\"']?[\\t ]{0,8}[:=][\\t ]{0,8}[\"']?Basic[\\t ]{1,8}(?<s>[A-Za-z0-9+/]{8,2048}={0,2})",
    flags: "i",
    trigger: "authorization",
    triggerLength: 13,
  },
];

const BUILTIN_MAX_REPEAT = 16384;

function compileBuiltin(spec: BuiltinSpec): CompiledPattern {
  const bounds = analyzeRegex(spec.pattern, { trusted: true, maxRepeat: BUILTIN_MAX_REPEAT });
  const secretGroup = spec.pattern.includes("(?<s>");
  const flags = spec.flags ?? "";
  return {
    kind: spec.kind,
    regex: new RegExp(spec.pattern, `g${secretGroup ? "d" : ""}${flags}`),
    trigger: spec.trigger === null ? null : new RegExp(spec.trigger, `g${flags}`),
    triggerLength: spec.triggerLength,
    bounds,
    secretGroup,
    near: spec.near ?? null,
    source: "builtin",
  };
}

/** The built-in credential patterns, in priority order. */
export const BUILTIN_PATTERNS: readonly CompiledPattern[] = BUILTIN_SPECS.map(compileBuiltin);
export const BUILTIN_KINDS: readonly string[] = [...new Set(BUILTIN_SPECS.map((s) => s.kind))];

// ---------------------------------------------------------------------------
// Operator-supplied DLP patterns.

/** Bounds on what an operator may configure. */
export const DLP_LIMITS = {
  maxPatterns: 32,
  maxSourceLength: 1024,
  maxMatchLength: 4096,
  maxRepeat: 4096,
  /** Product of quantifier ranges / alternation widths; keeps backtracking polynomial and small. */
  maxCost: 100_000,
} as const;

export const DlpPatternConfig = z
  .object({
    name: z.string().regex(/^[a-z][a-z0-9_]{0,31}$/, "lowercase identifier, at most 32 characters"),
    pattern: z.string().min(1).max(DLP_LIMITS.maxSourceLength),
    flags: z.enum(["", "i"]).optional(),
  })
  .strict();
export type DlpPatternConfig = z.infer<typeof DlpPatternConfig>;

function refuseDlp(index: number, name: string, reason: string): never {
  throw new LeaseholdError("INVALID_ARGUMENT", `DLP pattern #${index} (${name}) refused by the guest scrubber: ${reason}`, {
    tier: "guest",
    details: { index, name, reason },
  });
}

/**
 * Validates and compiles DLP patterns. Refuses (INVALID_ARGUMENT) anything
 * the stream could not scrub soundly: unbounded or over-long matches, a
 * pattern that can match the empty string, anchors, back-references,
 * look-around, nested quantifiers, a backtracking budget over the limit,
 * duplicate names or a name that shadows a built-in kind.
 */
export function compileDlpPatterns(input: unknown): CompiledPattern[] {
  const list = z.array(z.unknown()).max(DLP_LIMITS.maxPatterns).safeParse(input);
  if (!list.success) {
    throw new LeaseholdError("INVALID_ARGUMENT", `DLP patterns refused by the guest scrubber: expected an array of at most ${DLP_LIMITS.maxPatterns}`, { tier: "guest" });
  }
  const seen = new Set<string>();
  return list.data.map((raw, index) => {
    const parsed = DlpPatternConfig.safeParse(raw);
    if (!parsed.success) {
      refuseDlp(index, "?", parsed.error.issues.map((i) => `${i.path.join(".") || "(entry)"}: ${i.message}`).join("; "));
    }
    const { name, pattern, flags = "" } = parsed.data;
    if (BUILTIN_KINDS.includes(name)) refuseDlp(index, name, "name shadows a built-in credential kind");
    if (seen.has(name)) refuseDlp(index, name, "duplicate name");
    seen.add(name);
    let bounds: RegexBounds;
    try {
      bounds = analyzeRegex(pattern, { trusted: false, maxRepeat: DLP_LIMITS.maxRepeat });
    } catch (error) {
      if (error instanceof RegexRefused) refuseDlp(index, name, error.message);
      throw error;
    }
    if (bounds.minLength === 0) refuseDlp(index, name, "pattern can match the empty string");
    if (bounds.maxLength > DLP_LIMITS.maxMatchLength) {
      refuseDlp(index, name, `a match can be ${bounds.maxLength} bytes; the limit is ${DLP_LIMITS.maxMatchLength}`);
    }
    if (bounds.cost > DLP_LIMITS.maxCost) {
      refuseDlp(index, name, `too expensive: backtracking budget ${bounds.cost} exceeds ${DLP_LIMITS.maxCost}`);
    }
    let regex: RegExp;
    try {
      regex = new RegExp(pattern, `g${flags}`);
    } catch (error) {
      return refuseDlp(index, name, `not a valid JavaScript regular expression: ${(error as Error).message}`);
    }
    // Belt and braces over the static analysis.
    if (new RegExp(pattern, flags).test("")) refuseDlp(index, name, "pattern can match the empty string");
    return { kind: name, regex, trigger: null, triggerLength: 0, bounds, secretGroup: false, near: null, source: "dlp" as const };
  });
}
