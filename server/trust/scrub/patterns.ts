import { z } from "zod";
import { LeaseholdError } from "../index";
import { analyzeRegex, RegexRefused, type RegexBounds } from "./regex-bounds";

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
 * Base64 of the hub's own secrets (see the leasehold_token rule). A secret
 * starts at byte offset 0, 1 or 2 of a 3-byte group of the encoded stream;
 * for each alignment, the characters that carry only the secret's bits are
 * computed here: fixed characters for the prefix, then one character class
 * per position for the body (each body byte is in the secret's alphabet, so
 * every position allows only some values), the last one also mixing the
 * byte after the secret. A random base64 blob matches such a run with odds
 * far below 1 in 2^40. Standard and URL-safe alphabets are both accepted.
 * Not caught: a line break inside the run (`base64` wraps at 76).
 */
const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64URL_EXTRA: Record<number, string> = { 62: "-", 63: "_" };

function charsOf(values: ReadonlySet<number>): string {
  const chars = [...values].sort((a, b) => a - b).flatMap((v) => [B64[v] ?? "", B64URL_EXTRA[v] ?? ""]).filter((c) => c !== "");
  const esc = (c: string) => (/[A-Za-z0-9_]/.test(c) ? c : `\\${c}`);
  return chars.length === 1 ? esc(chars[0] ?? "") : `[${chars.map(esc).join("")}]`;
}

function base64Run(alignment: number, bytes: ReadonlyArray<ReadonlySet<number> | null>): string[] {
  // bytes: the secret, one set of possible values per byte; null = any byte (around the secret).
  const stream = [...Array.from({ length: alignment }, () => null), ...bytes, null];
  const all = new Set(Array.from({ length: 256 }, (_, i) => i));
  const at = (k: number) => stream[k] ?? all;
  const out: string[] = [];
  const first = Math.ceil((8 * alignment) / 6);
  const last = Math.ceil((8 * (alignment + bytes.length)) / 6);
  for (let j = first; j < last; j++) {
    const bit = 6 * j;
    const b0 = Math.floor(bit / 8);
    const shift = bit % 8;
    const values = new Set<number>();
    if (shift <= 2) {
      for (const x of at(b0)) values.add((x >> (2 - shift)) & 63);
    } else {
      // Only the low bits of the first byte and the high bits of the second reach this character.
      const xs = new Set([...at(b0)].map((x) => (x << (shift - 2)) & 63));
      const ys = new Set([...at(b0 + 1)].map((y) => y >> (10 - shift)));
      for (const x of xs) for (const y of ys) values.add(x | y);
    }
    out.push(charsOf(values));
  }
  return out;
}

function hubBase64Specs(): BuiltinSpec[] {
  const lit = (s: string) => [...s].map((c) => new Set([c.charCodeAt(0)]));
  const set = (alphabet: string) => new Set([...alphabet].map((c) => c.charCodeAt(0)));
  const b64url = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");
  const base32 = set("abcdefghijklmnopqrstuvwxyz234567");
  const secrets = [
    [...lit("lh_"), ...Array.from({ length: 32 }, () => b64url)],
    [...lit("lha_"), ...Array.from({ length: 32 }, () => b64url)],
    [...lit("lhr_"), ...Array.from({ length: 43 }, () => b64url)],
    [...lit("lhe_"), ...Array.from({ length: 32 }, () => base32)],
  ];
  return [0, 1, 2].map((alignment) => {
    const runs = secrets.map((bytes) => base64Run(alignment, bytes));
    // The first three positions, over every secret, are the trigger (a literal-ish prefix).
    const trigger = [0, 1, 2].map((k) => charsOf(new Set(runs.flatMap((r) => [...classValues(r[k] ?? "")])))).join("");
    return { kind: "leasehold_token", pattern: `(?:${runs.map((r) => r.join("")).join("|")})`, trigger, triggerLength: 3 };
  });
}

/** The base64 values a class built by charsOf admits. */
function classValues(cls: string): Set<number> {
  const body = cls.startsWith("[") ? cls.slice(1, -1) : cls;
  const values = new Set<number>();
  for (const c of body.replace(/\\/g, "")) {
    const v = B64.indexOf(c);
    if (v >= 0) values.add(v);
    else if (c === "-") values.add(62);
    else if (c === "_") values.add(63);
  }
  return values;
}

/**
 * Order matters only for ties (two kinds matching at the same byte): the
 * earlier entry wins. Otherwise the leftmost match wins, as one alternation would.
 */
const SPECS_BEFORE_HUB_BASE64: readonly BuiltinSpec[] = [
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
    pattern: "eyJ[A-Za-z0-9_-]{8,4096}\\.eyJ[A-Za-z0-9_-]{2,8192}\\.[A-Za-z0-9_-]{0,2048}",
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
    pattern: "(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,244})",
    trigger: "gh[pousr]_|github_pat_",
    triggerLength: 11,
  },
  {
    kind: "gitlab_token",
    pattern: "gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent)-[A-Za-z0-9_-]{20,255}",
    trigger: "gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent)-",
    triggerLength: 8,
  },
  {
    kind: "slack_token",
    pattern: "(?:xox[abposer]-[A-Za-z0-9-]{10,250}|xapp-[0-9]-[A-Za-z0-9-]{10,250})",
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
    pattern: "(?:[sr]k_(?:live|test)_[A-Za-z0-9]{16,247}|whsec_[A-Za-z0-9]{24,128})",
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
  // --- Vendor formats derived from @secretlint/secretlint-rule-preset-recommend
  // 13.0.7 (rule named in each comment), rewritten as bounded byte patterns with a
  // literal trigger so the stream can hold back only what a match could still need.
  {
    // secretlint-rule-anthropic (sk-ant-api0N-…AA); also admin/oauth keys.
    kind: "anthropic_key",
    pattern: "sk-ant-(?:api|admin|oat|sid)[0-9]{2}-[A-Za-z0-9_-]{20,300}",
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
    pattern: "npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])",
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
    pattern: "hv[sbr]\\.[A-Za-z0-9_-]{24,400}(?![A-Za-z0-9_-])",
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
    pattern: "do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9_])",
    trigger: "do[opr]_v1_",
    triggerLength: 7,
  },
  {
    // secretlint-rule-docker (dckr_pat_).
    kind: "docker_token",
    pattern: "dckr_pat_[A-Za-z0-9_-]{27,64}",
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
    // The hub's own secrets: agent tokens lh_ and OAuth access tokens lha_ (+ 32 base64url),
    // refresh tokens lhr_ (+ 43) — server/tokens/secret.ts; enrolment codes lhe_ + 32 base32
    // (server/hosts/enrolment.ts). No left boundary: a letter glued before the prefix does not
    // make it something else.
    kind: "leasehold_token",
    pattern: "lh(?:[ar]?_[A-Za-z0-9_-]{32,128}|e_[a-z2-7]{32})",
    trigger: "lh[ar]?_|lhe_",
    triggerLength: 4,
  },
  // The same secrets hex-encoded (`xxd -p`, `od`, Buffer.toString("hex")): every byte of a
  // prefix, then two hex digits per body character (all in 0x2d–0x7a).
  {
    kind: "leasehold_token",
    pattern: "6c68(?:(?:61)?5f(?:[2-7][0-9a-f]){32}|725f(?:[2-7][0-9a-f]){43}|655f(?:[2-7][0-9a-f]){32})",
    flags: "i",
    trigger: "6c68",
    triggerLength: 4,
  },
];

// Between the two lists (builtinSpecs): the hub's own secrets base64-encoded, at each of
// the three alignments a secret can have in the encoded stream (hubBase64Specs).

const SPECS_AFTER_HUB_BASE64: readonly BuiltinSpec[] = [
  // --- Formats without a rule in @secretlint/secretlint-rule-preset-recommend 13.0.7 (its
  // rules: 1password, anthropic, aws, basicauth, cloudflare, database-connection-string,
  // databricks, docker, figma, gcp, github, gitlab, grafana, groq, hashicorp-vault,
  // huggingface, linear, notion, npm, openai, privatekey, sendgrid, shopify, slack, stripe,
  // tailscale, vercel): each pattern names where its format is documented.
  {
    // age secret keys: Bech32, HRP "AGE-SECRET-KEY-", upper case, 32-byte key → 58 data+checksum
    // characters (age-encryption.org/v1, "X25519 recipient type").
    kind: "age_secret_key",
    pattern: "AGE-SECRET-KEY-1[qpzry9x8gf2tvdw0s3jn54khce6mua7l]{58}",
    flags: "i",
    trigger: "age-secret-key-1",
    triggerLength: 16,
  },
  {
    // PyPI API tokens: "pypi-" + a macaroon whose base64url starts with the location
    // "pypi.org" (AgEIcHlwaS5vcmc) or "test.pypi.org" (pypi.org/help/#apitoken; warehouse
    // macaroons).
    kind: "pypi_token",
    pattern: "pypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_-]{50,1000}",
    trigger: "pypi-AgE",
    triggerLength: 8,
  },
  {
    // Telegram bot tokens: "<bot id>:<35-character secret>" (core.telegram.org/bots/api,
    // "Authorizing your bot"); issued secrets begin with "AA". The bot id stays readable.
    kind: "telegram_bot_token",
    pattern: ":(?<=(?<![0-9])[0-9]{6,12}:)(?<s>AA[A-Za-z0-9_-]{33})(?![A-Za-z0-9_-])",
    trigger: ":AA",
    triggerLength: 3,
  },
  {
    // Azure Storage / Service Bus / Event Hubs connection strings: AccountKey= (base64 of a
    // 64-byte key) and SharedAccessKey= (learn.microsoft.com, "Configure Azure Storage
    // connection strings"; "Service Bus access control with Shared Access Signatures").
    kind: "azure_storage_key",
    pattern: "(?:AccountKey|SharedAccessKey)[\\t ]{0,8}=[\\t ]{0,8}(?<s>[A-Za-z0-9+/]{20,120}={0,2})",
    flags: "i",
    trigger: "accountkey|sharedaccesskey",
    triggerLength: 15,
  },
  {
    // ~/.netrc: "machine <host> [login <u>] [account <a>] password <p>", tokens separated by
    // spaces, tabs or newlines; "default" instead of a machine (GNU inetutils ftp manual, "The
    // .netrc file"; curl's --netrc documentation). The match starts at "password" (the entry
    // before it is look-behind), so a cut stream near a mere "default" is not redacted to its end.
    kind: "netrc_password",
    pattern:
      "password(?<=(?<![A-Za-z0-9_])(?:machine[\\t ]{1,8}[^\\s]{1,256}|default)(?:[\\t\\r\\n ]{1,16}(?:login|account|port|protocol)[\\t ]{1,8}[^\\s]{1,256}){0,4}" +
      "[\\t\\r\\n ]{1,16}password)[\\t ]{1,8}(?<s>[^\\s]{1,512})",
    trigger: "password",
    triggerLength: 8,
  },
  {
    // curl -u/--user user:password (curl(1), "-u, --user <user:password>"): HTTP basic
    // credentials, so the basic_auth kind. `-u user` alone (curl prompts) has no colon. The
    // match starts at the option (curl on the same line is look-behind), so a cut stream near
    // a mere "curl" is not redacted to its end.
    kind: "basic_auth",
    pattern:
      "(?:-u|--user)(?<=(?<![A-Za-z0-9_-])curl[\\t ](?:[^\\n]{0,256}[\\t ])?(?:-u|--user))(?:[\\t ]{1,8}|=)?[^\\s:\"']{0,256}:(?<s>[^\\s\"']{1,256})",
    trigger: "-u|--user",
    triggerLength: 6,
  },
  {
    // The same, quoted: the password runs to the closing quote.
    kind: "basic_auth",
    pattern:
      "(?:-u|--user)(?<=(?<![A-Za-z0-9_-])curl[\\t ](?:[^\\n]{0,256}[\\t ])?(?:-u|--user))(?:[\\t ]{1,8}|=)?[\"'][^:\"'\\n]{0,256}:(?<s>[^\"'\\n]{1,256})",
    trigger: "-u|--user",
    triggerLength: 6,
  },
  {
    // YAML (and YAML-like config) `password: value` on its own line: Ansible, Docker Compose,
    // Kubernetes, Spring (yaml.org/spec/1.2.2, block mappings). Only a key that starts its line
    // (after indentation or "- "), so "the password: …" in prose mid-line passes; `${VAR}`,
    // `{{ template }}`, anchors, aliases and block scalars are not values.
    kind: "secret_assignment",
    generic: true,
    pattern:
      "(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|auth[_-]?key)" +
      "(?<=(?<![^\\n])[\\t ]{0,64}(?:- )?[\"']?[A-Za-z0-9_.-]{0,64}(?:password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|auth[_-]?key))" +
      "[\"']?[\\t ]{0,8}:[\\t ]{1,8}[\"']?(?<s>[^\\s\"'#|>&*!{\\[$%@`][^\\r\\n\"']{0,511})",
    flags: "i",
    trigger: "password|passwd|passphrase|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|credential|auth[_-]?key",
    triggerLength: 11,
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

let builtinSpecsMemo: readonly BuiltinSpec[] | undefined;
let builtinPatternsMemo: readonly CompiledPattern[] | undefined;
let builtinKindsMemo: readonly string[] | undefined;

function builtinSpecs(): readonly BuiltinSpec[] {
  return (builtinSpecsMemo ??= [...SPECS_BEFORE_HUB_BASE64, ...hubBase64Specs(), ...SPECS_AFTER_HUB_BASE64]);
}

/**
 * The built-in credential patterns, in priority order. Built and compiled
 * on first use, not at import: a tenth of a CPU-second that every CLI
 * command and every hub start would otherwise pay before it scrubs anything.
 */
export function builtinPatterns(): readonly CompiledPattern[] {
  return (builtinPatternsMemo ??= builtinSpecs().map(compileBuiltin));
}

export function builtinKinds(): readonly string[] {
  return (builtinKindsMemo ??= [...new Set(builtinSpecs().map((s) => s.kind))]);
}

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
    if (builtinKinds().includes(name)) refuseDlp(index, name, "name shadows a built-in credential kind");
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
