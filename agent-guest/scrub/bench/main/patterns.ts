/**
 * The scrubber as it was on main at f0b1247 (before scrubbing across pages
 * and spellings), kept only so the bench can measure the current engine
 * against it in the same run. Not used by anything else.
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
  /**
   * A context rule (NAME=value): when its secret is itself a credential of a
   * specific format, the redaction is reported under that format's kind.
   */
  generic: boolean;
  /**
   * Sticky copy of `regex`. With a trigger, a search finds the trigger first
   * (a literal alternation, fast) and runs this only there; also tests "does
   * this format match exactly here".
   */
  sticky: RegExp;
}

interface BuiltinSpec {
  kind: string;
  pattern: string;
  flags?: "i";
  trigger: string | null;
  triggerLength: number;
  near?: { kind: string; window: number };
  generic?: true;
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
  // --- Issue 12: vendor formats derived from @secretlint/secretlint-rule-preset-recommend
  // 13.0.7 (rule named in each comment), rewritten as bounded byte patterns with a
  // literal trigger so the stream can hold back only what a match could still need.
  {
    // secretlint-rule-anthropic (sk-ant-api0N-…AA); also admin/oauth keys.
    kind: "anthropic_key",
    pattern: "(?<![A-Za-z0-9_-])sk-ant-(?:api|admin|oat|sid)[0-9]{2}-[A-Za-z0-9_-]{20,300}",
    trigger: "sk-ant-",
    triggerLength: 7,
  },
  {
    // secretlint-rule-openai: project/service-account/admin keys and the legacy T3BlbkFJ form;
    // the plain 48-character legacy form too.
    kind: "openai_key",
    pattern: "(?<![A-Za-z0-9_-])sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,300}|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|[A-Za-z0-9]{48}(?![A-Za-z0-9_-]))",
    trigger: "sk-",
    triggerLength: 3,
  },
  {
    // secretlint-rule-npm (access tokens).
    kind: "npm_token",
    pattern: "(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])",
    trigger: "npm_",
    triggerLength: 4,
  },
  {
    // secretlint-rule-npm (_authToken= in .npmrc); `${VAR}` references are not secrets.
    kind: "npm_token",
    pattern: "_authToken[\\t ]{0,8}=[\\t ]{0,8}[\"']?(?<s>[^\\s\"'$][^\\s\"']{0,511})",
    trigger: "_authToken",
    triggerLength: 10,
  },
  {
    // secretlint-rule-hashicorp-vault (service, batch, recovery tokens); lengths widened
    // down to 24 for older service tokens.
    kind: "vault_token",
    pattern: "(?<![A-Za-z0-9_-])hv[sbr]\\.[A-Za-z0-9_-]{24,400}(?![A-Za-z0-9_-])",
    trigger: "hv[sbr]\\.",
    triggerLength: 4,
  },
  {
    // secretlint-rule-sendgrid.
    kind: "sendgrid_key",
    pattern: "(?<![A-Za-z0-9_-])SG\\.[A-Za-z0-9_-]{16,128}\\.[A-Za-z0-9_-]{16,128}",
    trigger: "SG\\.",
    triggerLength: 3,
  },
  {
    // Not in the preset: DigitalOcean personal, OAuth and refresh tokens.
    kind: "digitalocean_token",
    pattern: "(?<![A-Za-z0-9_])do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9_])",
    trigger: "do[opr]_v1_",
    triggerLength: 7,
  },
  {
    // secretlint-rule-docker (dckr_pat_).
    kind: "docker_token",
    pattern: "(?<![A-Za-z0-9_-])dckr_pat_[A-Za-z0-9_-]{27,64}",
    trigger: "dckr_pat_",
    triggerLength: 9,
  },
  {
    // Not in the preset: ~/.docker/config.json `auths` entries (base64 user:password) and tokens.
    kind: "docker_auth",
    pattern: "\"(?:auth|identitytoken|registrytoken)\"[\\t ]{0,8}:[\\t ]{0,8}\"(?<s>[A-Za-z0-9+/=._-]{4,8192})\"",
    flags: "i",
    trigger: "\"(?:auth|identitytoken|registrytoken)\"",
    triggerLength: 15,
  },
  {
    // secretlint-rule-groq, -huggingface, -linear, -notion, -shopify, -grafana, -vercel,
    // -databricks, -figma, -cloudflare, -tailscale, -1password: one kind, `vendor_token`.
    kind: "vendor_token",
    pattern:
      "(?<![A-Za-z0-9_-])(?:gsk_[A-Za-z0-9]{52}|hf_[A-Za-z]{34}|lin_api_[A-Za-z0-9_]{32,128}|ntn_[0-9]{11}[A-Za-z0-9]{35}" +
      "|shp(?:pa|ca|at|ss)_[A-Za-z0-9]{32,64}|glc_[A-Za-z0-9+/]{32,400}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}" +
      "|vc[pciark]_[A-Za-z0-9]{20,60}|dapi[a-f0-9]{32}(?:-[0-9])?|figd_[A-Za-z0-9_-]{40,200}|cf(?:k|ut|at)_[A-Za-z0-9]{40}[0-9a-f]{8}" +
      "|tskey-[a-z]{2,20}-[0-9A-Za-z_]{8,40}-[0-9A-Za-z_]{16,60}|ops_ey[A-Za-z0-9+/=]{100,1280})(?![A-Za-z0-9_])",
    trigger: "gsk_|hf_|lin_api_|ntn_|shp(?:pa|ca|at|ss)_|glc_|glsa_|vc[pciark]_|dapi|figd_|cf(?:k|ut|at)_|tskey-|ops_ey",
    triggerLength: 8,
  },
  {
    // MySQL/MariaDB clients take the password glued to -p (`mysql -u root -pS3cret`), seen in
    // shell traces, process lists and scripts. A bare `-p` (prompt) is not matched.
    kind: "mysql_password",
    pattern: "(?<![A-Za-z0-9_-])(?:mysql|mariadb)[a-z-]{0,12}[\\t ][^\\n]{0,1024}?[\\t ]-p(?<s>[^\\s'\"]{1,256})",
    trigger: "mysql|mariadb",
    triggerLength: 7,
  },
  {
    // NAME=value where NAME ends in a secret-bearing word (DB_PASSWORD=, API_KEY=, X_TOKEN=):
    // env dumps, .env files, `export`, `--password=`. Quoted values are redacted up to the quote.
    // `password: value` (YAML/prose) stays for DLP patterns: too common in ordinary text.
    kind: "secret_assignment",
    generic: true,
    pattern:
      "(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|auth[_-]?key)" +
      "[\"']?[\\t ]{0,8}=[\\t ]{0,8}\"(?<s>[^\"\\n]{1,512})\"",
    flags: "i",
    trigger: "password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential|auth[_-]?key",
    triggerLength: 11,
  },
  {
    kind: "secret_assignment",
    generic: true,
    pattern:
      "(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|auth[_-]?key)" +
      "[\"']?[\\t ]{0,8}=[\\t ]{0,8}'(?<s>[^'\\n]{1,512})'",
    flags: "i",
    trigger: "password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential|auth[_-]?key",
    triggerLength: 11,
  },
  {
    kind: "secret_assignment",
    generic: true,
    pattern:
      "(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|auth[_-]?key)" +
      "[\"']?[\\t ]{0,8}=[\\t ]{0,8}(?<s>[^\\s\"'\\x60]{1,512})",
    flags: "i",
    trigger: "password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential|auth[_-]?key",
    triggerLength: 11,
  },
  {
    // JSON: "password": "…", "client_secret": "…", "api_key": "…".
    kind: "secret_assignment",
    generic: true,
    pattern:
      "(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|auth[_-]?key)" +
      "\"[\\t ]{0,8}:[\\t ]{0,8}\"(?<s>[^\"\\\\\\n]{1,512})\"",
    flags: "i",
    trigger: "password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential|auth[_-]?key",
    triggerLength: 11,
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

/** Rules with the same trigger share one RegExp, so the scrubber scans for it once (see Scrubber.search). */
const TRIGGERS = new Map<string, RegExp>();
function triggerRegex(source: string, flags: string): RegExp {
  const key = `${flags}/${source}`;
  let re = TRIGGERS.get(key);
  if (re === undefined) {
    re = new RegExp(source, `g${flags}`);
    TRIGGERS.set(key, re);
  }
  return re;
}

function compileBuiltin(spec: BuiltinSpec): CompiledPattern {
  const bounds = analyzeRegex(spec.pattern, { trusted: true, maxRepeat: BUILTIN_MAX_REPEAT });
  const secretGroup = spec.pattern.includes("(?<s>");
  const flags = spec.flags ?? "";
  return {
    kind: spec.kind,
    regex: new RegExp(spec.pattern, `g${secretGroup ? "d" : ""}${flags}`),
    trigger: spec.trigger === null ? null : triggerRegex(spec.trigger, flags),
    triggerLength: spec.triggerLength,
    bounds,
    secretGroup,
    near: spec.near ?? null,
    source: "builtin",
    generic: spec.generic === true,
    sticky: new RegExp(spec.pattern, `y${secretGroup ? "d" : ""}${flags}`),
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
    return { kind: name, regex, trigger: null, triggerLength: 0, bounds, secretGroup: false, near: null, source: "dlp" as const, generic: false, sticky: new RegExp(pattern, `y${flags}`) };
  });
}
