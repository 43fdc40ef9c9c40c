/**
 * Hostile / table corpus for the scrubber. Secrets are assembled at run time
 * from pieces so this file does not itself look like a leaked credential to
 * repository secret scanners; every value is fake.
 */

export interface ScrubCase {
  name: string;
  input: string | Buffer;
  /** Exact expected output (latin1 view). */
  expect: string | Buffer;
  kinds: string[];
  count: number;
}

const b62 = (n: number, seed = 7) => {
  const a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let x = seed;
  let out = "";
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += a[x % a.length];
  }
  return out;
};

export const FAKE = {
  awsId: "AK" + "IA" + "IOSFODNN7EXAMPLE",
  awsId2: "AS" + "IA" + "Y34FZKBOKMUTVV7A",
  awsSecret: "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "EXAMPLEKEY",
  ghp: "gh" + "p_" + b62(36, 1),
  gho: "gh" + "o_" + b62(36, 2),
  ghPat: "github" + "_pat_" + b62(22, 3) + "_" + b62(59, 4),
  glpat: "gl" + "pat-" + b62(20, 5),
  xoxb: "xo" + "xb-" + "1234567890-" + b62(24, 6),
  xoxp: "xo" + "xp-" + "1234567890-1234567890-" + b62(32, 7),
  slackHook: "https://hooks.slack" + ".com/services/T0000000/B0000000/" + b62(24, 8),
  skLive: "sk" + "_live_" + b62(24, 9),
  rkTest: "rk" + "_test_" + b62(24, 10),
  whsec: "wh" + "sec_" + b62(32, 11),
  aiza: "AI" + "za" + b62(35, 12),
  ya29: "ya" + "29." + b62(60, 13),
  jwt: "ey" + "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
  jwtNone: "ey" + "JhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.",
  lh: "lh" + "_" + b62(32, 14),
  pemBody: [b62(64, 15), b62(64, 16), b62(40, 17) + "=="].join("\n"),
};

const pem = (label: string, body = FAKE.pemBody) => `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----`;

const R = (kind: string) => `[REDACTED:${kind}]`;

const redacted = (name: string, input: string, expect: string, kinds: string[], count = kinds.length): ScrubCase => ({
  name,
  input,
  expect,
  kinds: [...new Set(kinds)].sort(),
  count,
});
const untouched = (name: string, input: string | Buffer): ScrubCase => ({ name, input, expect: input, kinds: [], count: 0 });

export const CORPUS: ScrubCase[] = [
  // --- AWS
  redacted("aws access key id", `id=${FAKE.awsId}\n`, `id=${R("aws_access_key")}\n`, ["aws_access_key"]),
  redacted("aws temporary key id (ASIA)", `key ${FAKE.awsId2} ok`, `key ${R("aws_access_key")} ok`, ["aws_access_key"]),
  redacted("aws key id in JSON", `{"AccessKeyId": "${FAKE.awsId2}"}`, `{"AccessKeyId": "${R("aws_access_key")}"}`, ["aws_access_key"]),
  redacted(
    "aws secret near access key id",
    `${FAKE.awsId} ${FAKE.awsSecret}`,
    `${R("aws_access_key")} ${R("aws_secret_key")}`,
    ["aws_access_key", "aws_secret_key"],
  ),
  redacted(
    "aws credentials file",
    `[default]\naws_access_key_id = ${FAKE.awsId}\naws_secret_access_key = ${FAKE.awsSecret}\n`,
    `[default]\naws_access_key_id = ${R("aws_access_key")}\naws_secret_access_key = ${R("aws_secret_key")}\n`,
    ["aws_access_key", "aws_secret_key"],
  ),
  redacted("aws secret by env var name", `AWS_SECRET_ACCESS_KEY=${FAKE.awsSecret}`, `AWS_SECRET_ACCESS_KEY=${R("aws_secret_key")}`, ["aws_secret_key"]),
  redacted(
    "aws secret in JSON (SecretAccessKey)",
    `{"SecretAccessKey": "${FAKE.awsSecret}", "x": 1}`,
    `{"SecretAccessKey": "${R("aws_secret_key")}", "x": 1}`,
    ["aws_secret_key"],
  ),
  // --- GitHub / GitLab / Slack / Stripe / Google
  redacted("github ghp_", `token: ${FAKE.ghp}`, `token: ${R("github_token")}`, ["github_token"]),
  redacted("github gho_ in quotes", `"${FAKE.gho}"`, `"${R("github_token")}"`, ["github_token"]),
  redacted("github fine-grained PAT", `GH=${FAKE.ghPat};`, `GH=${R("github_token")};`, ["github_token"]),
  redacted("gitlab glpat-", `CI_TOKEN ${FAKE.glpat}\n`, `CI_TOKEN ${R("gitlab_token")}\n`, ["gitlab_token"]),
  redacted("slack bot token", `slack=${FAKE.xoxb}`, `slack=${R("slack_token")}`, ["slack_token"]),
  redacted("slack user token", `${FAKE.xoxp} `, `${R("slack_token")} `, ["slack_token"]),
  redacted("slack webhook url", `curl ${FAKE.slackHook} -d x`, `curl ${R("slack_webhook")} -d x`, ["slack_webhook"]),
  redacted("stripe live secret key", `STRIPE=${FAKE.skLive}`, `STRIPE=${R("stripe_key")}`, ["stripe_key"]),
  redacted("stripe restricted test key", `${FAKE.rkTest}.`, `${R("stripe_key")}.`, ["stripe_key"]),
  redacted("stripe webhook secret", `secret ${FAKE.whsec}`, `secret ${R("stripe_key")}`, ["stripe_key"]),
  redacted("google api key", `key=${FAKE.aiza}&q=1`, `key=${R("google_api_key")}&q=1`, ["google_api_key"]),
  redacted("google oauth access token", `access_token: ${FAKE.ya29}`, `access_token: ${R("google_oauth_token")}`, ["google_oauth_token"]),
  // --- JWT / Bearer / Basic
  redacted("jwt", `cookie=${FAKE.jwt}; path=/`, `cookie=${R("jwt")}; path=/`, ["jwt"]),
  redacted("unsigned jwt (alg none)", `t ${FAKE.jwtNone} end`, `t ${R("jwt")} end`, ["jwt"]),
  redacted("bearer header keeps the scheme", `Authorization: Bearer abcdefghijklmnopqrstuv123`, `Authorization: Bearer ${R("bearer_token")}`, ["bearer_token"]),
  redacted("bearer lowercase", `authorization: bearer ZZZZZZZZZZZZZZZZZZZZ\n`, `authorization: bearer ${R("bearer_token")}\n`, ["bearer_token"]),
  redacted("bearer carrying a jwt is one bearer redaction", `Bearer ${FAKE.jwt}`, `Bearer ${R("bearer_token")}`, ["bearer_token"]),
  redacted("bearer carrying an lh_ token", `Bearer ${FAKE.lh}`, `Bearer ${R("bearer_token")}`, ["bearer_token"]),
  redacted("basic auth header", `Authorization: Basic dXNlcjpwYXNzd29yZA==\n`, `Authorization: Basic ${R("basic_auth")}\n`, ["basic_auth"]),
  // --- PEM private keys
  redacted("pem rsa private key", `before\n${pem("RSA PRIVATE KEY")}\nafter`, `before\n${R("private_key")}\nafter`, ["private_key"]),
  redacted("pem ec private key", pem("EC PRIVATE KEY"), R("private_key"), ["private_key"]),
  redacted("pem openssh private key", `${pem("OPENSSH PRIVATE KEY")}\n`, `${R("private_key")}\n`, ["private_key"]),
  redacted("pem pkcs8 private key", `x${pem("PRIVATE KEY")}y`, `x${R("private_key")}y`, ["private_key"]),
  redacted("pem encrypted private key", pem("ENCRYPTED PRIVATE KEY"), R("private_key"), ["private_key"]),
  redacted("pgp private key block", pem("PGP PRIVATE KEY BLOCK"), R("private_key"), ["private_key"]),
  redacted(
    "pem with legacy encryption headers",
    pem("RSA PRIVATE KEY", `Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123456789ABCDEF\n\n${FAKE.pemBody}`),
    R("private_key"),
    ["private_key"],
  ),
  redacted(
    "pem truncated (no END line) still redacts the body",
    `-----BEGIN RSA PRIVATE KEY-----\n${FAKE.pemBody}\n`,
    R("private_key"),
    ["private_key"],
  ),
  redacted("pem with CRLF line ends", pem("PRIVATE KEY").replaceAll("\n", "\r\n"), R("private_key"), ["private_key"]),
  // --- connection strings
  redacted(
    "postgres url password",
    `DATABASE_URL=postgres://app:Sup3rS3cret@db.internal:5432/app`,
    `DATABASE_URL=postgres://app:${R("connection_string_password")}@db.internal:5432/app`,
    ["connection_string_password"],
  ),
  redacted(
    "postgresql url with raw @ in password",
    `postgresql://u:p@ss@w0rd@h/db`,
    `postgresql://u:${R("connection_string_password")}@h/db`,
    ["connection_string_password"],
  ),
  redacted("mysql url", `mysql://root:toor@127.0.0.1:3306/x`, `mysql://root:${R("connection_string_password")}@127.0.0.1:3306/x`, ["connection_string_password"]),
  redacted(
    "mongodb+srv url",
    `mongodb+srv://svc:pa55w0rd@cluster0.example.net/?retryWrites=true`,
    `mongodb+srv://svc:${R("connection_string_password")}@cluster0.example.net/?retryWrites=true`,
    ["connection_string_password"],
  ),
  redacted("redis url with empty user", `redis://:hunter2@cache:6379`, `redis://:${R("connection_string_password")}@cache:6379`, ["connection_string_password"]),
  redacted("rediss url", `REDIS=rediss://default:abc123@r.example:6380`, `REDIS=rediss://default:${R("connection_string_password")}@r.example:6380`, ["connection_string_password"]),
  redacted("amqp url", `amqp://guest:guest@rabbit:5672/`, `amqp://guest:${R("connection_string_password")}@rabbit:5672/`, ["connection_string_password"]),
  redacted("amqps upper-case scheme", `AMQPS://u:v@q/`, `AMQPS://u:${R("connection_string_password")}@q/`, ["connection_string_password"]),
  redacted(
    "jdbc postgres url",
    `jdbc:postgresql://u:pw9@h:5432/db`,
    `jdbc:postgresql://u:${R("connection_string_password")}@h:5432/db`,
    ["connection_string_password"],
  ),
  redacted("https basic-auth url", `git clone https://bob:t0ken@git.example.com/r.git`, `git clone https://bob:${R("url_password")}@git.example.com/r.git`, ["url_password"]),
  // --- the hub's own tokens
  redacted("leasehold token", `LEASEHOLD_TOKEN=${FAKE.lh}\n`, `LEASEHOLD_TOKEN=${R("leasehold_token")}\n`, ["leasehold_token"]),
  redacted("leasehold token in json", `{"token":"${FAKE.lh}"}`, `{"token":"${R("leasehold_token")}"}`, ["leasehold_token"]),
  // --- mixtures and bytes
  redacted(
    "several kinds on one line",
    `${FAKE.ghp} ${FAKE.skLive} ${FAKE.lh}`,
    `${R("github_token")} ${R("stripe_key")} ${R("leasehold_token")}`,
    ["github_token", "stripe_key", "leasehold_token"],
  ),
  redacted("same kind twice counts twice", `${FAKE.ghp}\n${FAKE.gho}`, `${R("github_token")}\n${R("github_token")}`, ["github_token"], 2),
  {
    name: "secret between invalid UTF-8 bytes keeps those bytes",
    input: Buffer.concat([Buffer.from([0xff, 0xc3, 0x28, 0x20]), Buffer.from(FAKE.ghp), Buffer.from([0x20, 0xed, 0xa0, 0x80, 0x00])]),
    expect: Buffer.concat([Buffer.from([0xff, 0xc3, 0x28, 0x20]), Buffer.from(R("github_token")), Buffer.from([0x20, 0xed, 0xa0, 0x80, 0x00])]),
    kinds: ["github_token"],
    count: 1,
  },
  redacted("secret after multibyte UTF-8", `clé: ${FAKE.glpat} ✓`, `clé: ${R("gitlab_token")} ✓`, ["gitlab_token"]),

  // --- near-misses: must pass through untouched
  untouched("the word AKIA in prose", "AKIA is the prefix of AWS access key ids"),
  untouched("AKIA with 15 chars", "AKIA" + "IOSFODNN7EXAMP"),
  untouched("AKIA with 17 chars (part of a longer id)", "AKIA" + "IOSFODNN7EXAMPLEX"),
  untouched("lower-case akia", "akia" + "iosfodnn7example"),
  untouched("AKIA key embedded in a longer word", "XAKIA" + "IOSFODNN7EXAMPLE"),
  untouched("40-char base64 string with no access key near", `checksum ${FAKE.awsSecret}`),
  untouched("git commit sha", "commit 3f786850e387550fdab836ed7e6dc881de23001b"),
  untouched("ghp_ too short", "gh" + "p_abcdef0123456789"),
  untouched("stripe publishable key", "pk" + "_live_" + b62(24, 20)),
  untouched("stripe key too short", "sk" + "_live_abc123"),
  untouched("AIza one char short", "AI" + "za" + b62(34, 21)),
  untouched("AIza one char long", "AI" + "za" + b62(36, 22)),
  untouched("jwt header alone", "ey" + "JhbGciOiJIUzI1NiJ9"),
  untouched("two base64 segments without eyJ payload", "ey" + "JhbGciOiJIUzI1NiJ9.abc.def"),
  untouched("bearer with a short token", "Authorization: Bearer abc"),
  untouched("bearer in prose", "Bearer authentication is described in RFC 6750."),
  untouched("basic in prose", "Basic usage of the tool: run it."),
  untouched("postgres url without password", "postgres://db.internal:5432/app"),
  untouched("postgres url with user only", "postgres://app@db.internal/app"),
  untouched("https url with port", "https://example.com:8443/path?q=1"),
  untouched("email address", "mail alice@example.com about it"),
  untouched("public key block", "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----"),
  untouched("certificate block", "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUJ\n-----END CERTIFICATE-----"),
  untouched("lh_ too short", "the lh_tokens table"),
  untouched("xoxb without dash", "xoxb is a slack prefix"),
  untouched("glpat- too short", "gl" + "pat-short"),
  untouched("uuid", "id 123e4567-e89b-12d3-a456-426614174000"),
  untouched("password: mid-line in prose", "Enter your password: it is never stored."),
  untouched("ya29 without dot", "ya29 is a prefix"),
  untouched("slack host without a path", "https://hooks.slack.com/"),
  untouched("binary with no text", Buffer.from([0, 1, 2, 0xfe, 0xff, 0x80, 0x7f, 0x1b, 0x5b])),
  untouched("empty input", ""),
];

// ---------------------------------------------------------------------------
// Formats the review found leaking, and split / encoded variants.

const hex = (n: number, seed = 3) => b62(n * 2, seed).replace(/[^a-f0-9]/g, "").padEnd(n, "0").slice(0, n).toLowerCase();
const tokenChars = (n: number, seed: number) => b62(n, seed);

export const FAKE12 = {
  openaiProj: "sk-" + "proj-" + tokenChars(74, 30) + "T3Blbk" + "FJ" + tokenChars(74, 31),
  openaiLegacy: "sk-" + tokenChars(20, 32) + "T3Blbk" + "FJ" + tokenChars(20, 33),
  anthropic: "sk-" + "ant-api03-" + tokenChars(93, 34) + "AA",
  npm: "np" + "m_" + tokenChars(36, 35),
  vault: "hv" + "s." + tokenChars(94, 36),
  sendgrid: "S" + "G." + tokenChars(22, 37) + "." + tokenChars(43, 38),
  digitalocean: "do" + "p_v1_" + hex(64, 39),
  dockerAuth: Buffer.from("robot:" + tokenChars(24, 40)).toString("base64"),
};

const ESC = "\x1b";

/** The eleven formats of the review, each alone (one row per format). */
export const REVIEW_FORMATS: ScrubCase[] = [
  redacted("openai project key", `OPENAI_API_KEY ${FAKE12.openaiProj}\n`, `OPENAI_API_KEY ${R("openai_key")}\n`, ["openai_key"]),
  redacted("openai legacy key", `key: ${FAKE12.openaiLegacy}`, `key: ${R("openai_key")}`, ["openai_key"]),
  redacted("anthropic key", `ANTHROPIC ${FAKE12.anthropic} ok`, `ANTHROPIC ${R("anthropic_key")} ok`, ["anthropic_key"]),
  redacted("npm token in .npmrc", `//registry.npmjs.org/:_authToken ${FAKE12.npm}\n`, `//registry.npmjs.org/:_authToken ${R("npm_token")}\n`, ["npm_token"]),
  redacted("vault service token", `X-Vault-Token ${FAKE12.vault}`, `X-Vault-Token ${R("vault_token")}`, ["vault_token"]),
  redacted("sendgrid key", `sendgrid ${FAKE12.sendgrid};`, `sendgrid ${R("sendgrid_key")};`, ["sendgrid_key"]),
  redacted("digitalocean token", `DO ${FAKE12.digitalocean}\n`, `DO ${R("digitalocean_token")}\n`, ["digitalocean_token"]),
  redacted("PASSWORD= in an env dump", `HOME=/root\nDB_PASSWORD=Sup3r-S3cret!\nPATH=/bin\n`, `HOME=/root\nDB_PASSWORD=${R("secret_assignment")}\nPATH=/bin\n`, ["secret_assignment"]),
  redacted("export PASSWORD=\"...\"", `export PASSWORD="hunter2 x"`, `export PASSWORD="${R("secret_assignment")}"`, ["secret_assignment"]),
  redacted(
    "docker config.json auth",
    `{"auths":{"https://index.docker.io/v1/":{"auth":"${FAKE12.dockerAuth}"}}}`,
    `{"auths":{"https://index.docker.io/v1/":{"auth":"${R("docker_auth")}"}}}`,
    ["docker_auth"],
  ),
  redacted("mysql -p<password>", `+ mysql -h db -u root -pS3cretPw app\n`, `+ mysql -h db -u root -p${R("mysql_password")} app\n`, ["mysql_password"]),
  redacted("aws key split by an ANSI reset", `id ${FAKE.awsId.slice(0, 8)}${ESC}[0m${FAKE.awsId.slice(8)}\n`, `id ${R("aws_access_key")}\n`, ["aws_access_key"]),
];

/** Encoded variants: ANSI escapes, NUL and other C0 bytes inside a token, UTF-16LE/BE text. */
export const ENCODED_VARIANTS: ScrubCase[] = [
  redacted("github token inside colour codes keeps them", `${ESC}[1;31m${FAKE.ghp}${ESC}[0m\n`, `${ESC}[1;31m${R("github_token")}${ESC}[0m\n`, ["github_token"]),
  redacted("github token with an ANSI reset inside", `t ${FAKE.ghp.slice(0, 12)}${ESC}[0m${FAKE.ghp.slice(12)} end`, `t ${R("github_token")} end`, ["github_token"]),
  redacted("openai key with a cursor move inside", `${FAKE12.openaiProj.slice(0, 40)}${ESC}[2K${ESC}[1G${FAKE12.openaiProj.slice(40)}\n`, `${R("openai_key")}\n`, ["openai_key"]),
  redacted("token with a NUL byte inside", `x ${FAKE.ghp.slice(0, 9)}\x00${FAKE.ghp.slice(9)} y`, `x ${R("github_token")} y`, ["github_token"]),
  redacted("token with backspace and BEL inside", `x ${FAKE12.npm.slice(0, 9)}\x08\x07${FAKE12.npm.slice(9)} y`, `x ${R("npm_token")} y`, ["npm_token"]),
  redacted("token wrapped in an OSC window title", `${ESC}]0;${FAKE12.npm}\x07rest`, `${ESC}]0;${R("npm_token")}\x07rest`, ["npm_token"]),
  {
    name: "UTF-16LE github token",
    input: Buffer.from(`key=${FAKE.ghp}\n`, "utf16le"),
    expect: Buffer.concat([Buffer.from("key=", "utf16le"), Buffer.from(R("github_token"), "utf16le").subarray(0, -1), Buffer.from("\0\n\0", "latin1")]),
    kinds: ["github_token"],
    count: 1,
  },
  {
    name: "UTF-16LE with BOM, anthropic key",
    input: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`k ${FAKE12.anthropic}`, "utf16le")]),
    expect: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("k ", "utf16le"), Buffer.from(R("anthropic_key"), "utf16le").subarray(0, -1), Buffer.from([0])]),
    kinds: ["anthropic_key"],
    count: 1,
  },
  {
    name: "UTF-16BE aws key id",
    input: Buffer.from(`k ${FAKE.awsId}!`, "utf16le").swap16(),
    expect: Buffer.concat([Buffer.from("k ", "utf16le").swap16(), Buffer.from([0]), Buffer.from(R("aws_access_key"), "utf16le").subarray(0, -1), Buffer.from("!", "utf16le").swap16()]),
    kinds: ["aws_access_key"],
    count: 1,
  },
];

/** Near-misses added with the new formats: must pass untouched. */
export const REVIEW_NEAR_MISSES: ScrubCase[] = [
  untouched("sk- too short for openai", "sk-" + "proj-abc"),
  untouched("npm_ too short", "np" + "m_install_dir"),
  untouched("hvs. too short", "hv" + "s.short"),
  untouched("max_tokens=5 is not a secret assignment", "max_tokens=5 token_count=7"),
  untouched("password prompt in prose", "Enter the password when asked."),
  untouched("mysql -p with no value (prompt)", "mysql -u root -p\n"),
  untouched("docker auths with an empty auth", `{"auths":{"r":{"auth":""}}}`),
  untouched("colour codes alone", `${ESC}[1;31mred${ESC}[0m`),
  untouched("UTF-16LE text without secrets", Buffer.from("hello world\n", "utf16le")),
];

// ---------------------------------------------------------------------------
// Spellings that once got a token past the scrubber, the hub's own secrets
// encoded, and seven formats that had no pattern.

const LH_BODY = tokenChars(32, 50);
export const FAKE30 = {
  lh: "lh" + "_" + LH_BODY,
  lha: "lh" + "a_" + tokenChars(32, 51),
  lhr: "lh" + "r_" + tokenChars(43, 52),
  lhe: "lh" + "e_" + tokenChars(32, 53).toLowerCase().replace(/[^a-z2-7]/g, "q"),
  age: "AGE-" + "SECRET-KEY-1" + "qpzry9x8gf2tvdw0s3jn54khce6mua7lqpzry9x8gf2tvdw0s3jn54khce".toUpperCase(),
  pypi: "py" + "pi-AgEIcHlwaS5vcmc" + "CJDk2ZjM1YTI5LWE3ZWQtNDk0OS1iZjUyLTk1MDAxNjU0NjI3NAACKlszLCJkYjg5" + tokenChars(40, 54),
  telegram: "7312345678:" + "AA" + tokenChars(33, 55),
  azureKey: tokenChars(86, 56) + "==",
};

/** Where the characters that carry a secret's bits lie in its base64 encoding (at byte offset `a` of the stream). */
const b64Cut = (pre: string, secret: string, post: string, kind: string) => {
  const enc = Buffer.from(pre + secret + post).toString("base64");
  const first = Math.ceil((8 * pre.length) / 6);
  const last = Math.ceil((8 * (pre.length + secret.length)) / 6);
  return { input: enc, expect: enc.slice(0, first) + R(kind) + enc.slice(last) };
};
const b64Row = (name: string, pre: string, secret: string) => {
  const { input, expect } = b64Cut(pre, secret, "\n", "leasehold_token");
  return redacted(name, `data: ${input}\n`, `data: ${expect}\n`, ["leasehold_token"]);
};
const ZWSP = "\u200b";

export const SPELLINGS: ScrubCase[] = [
  redacted("a letter glued before lh_", `echo x${FAKE30.lh}\n`, `echo x${R("leasehold_token")}\n`, ["leasehold_token"]),
  redacted("a letter glued before ghp_", `echo "x${FAKE.ghp}"`, `echo "x${R("github_token")}"`, ["github_token"]),
  redacted("lh_ inside an identifier", "my" + FAKE30.lh, "my" + R("leasehold_token"), ["leasehold_token"]),
  redacted("JSON-escaped underscore (\\u005f)", `{"t":"lh\\u005f${LH_BODY}"}`, `{"t":"${R("leasehold_token")}"}`, ["leasehold_token"]),
  redacted("\\x-escaped underscore", `printf 'lh\\x5f${LH_BODY}'`, `printf '${R("leasehold_token")}'`, ["leasehold_token"]),
  redacted("every character JSON-escaped", `"${[...FAKE.ghp].map((c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0")).join("")}"`, `"${R("github_token")}"`, ["github_token"]),
  redacted("a zero-width space inside", `t=${FAKE30.lh.slice(0, 9)}${ZWSP}${FAKE30.lh.slice(9)} ok`, `t=${R("leasehold_token")} ok`, ["leasehold_token"]),
  redacted("zero-width spaces between every character", `${[...FAKE.ghp].join(ZWSP)}\n`, `${R("github_token")}\n`, ["github_token"]),
  redacted("soft hyphen, word joiner and BOM inside", `${FAKE.glpat.slice(0, 4)}\u00ad${FAKE.glpat.slice(4, 9)}\u2060${FAKE.glpat.slice(9, 14)}\ufeff${FAKE.glpat.slice(14)};`, `${R("gitlab_token")};`, ["gitlab_token"]),
  redacted("a Unicode tag character inside", `${FAKE12.npm.slice(0, 6)}\u{e0041}${FAKE12.npm.slice(6)} .`, `${R("npm_token")} .`, ["npm_token"]),
  redacted("a variation selector inside", `k ${FAKE.skLive.slice(0, 12)}\ufe0f${FAKE.skLive.slice(12)}`, `k ${R("stripe_key")}`, ["stripe_key"]),
  redacted("JSON-escaped zero-width space inside", `"${FAKE30.lh.slice(0, 12)}\\u200b${FAKE30.lh.slice(12)}"`, `"${R("leasehold_token")}"`, ["leasehold_token"]),
  redacted("OAuth access token lha_", `a=${FAKE30.lha}`, `a=${R("leasehold_token")}`, ["leasehold_token"]),
  redacted("OAuth refresh token lhr_", `${FAKE30.lhr}\n`, `${R("leasehold_token")}\n`, ["leasehold_token"]),
  redacted("enrolment code lhe_", `leasehold-guest enrol ${FAKE30.lhe}`, `leasehold-guest enrol ${R("leasehold_token")}`, ["leasehold_token"]),
  b64Row("base64 of a hub token, aligned", "", FAKE30.lh),
  b64Row("base64 of a hub token, one byte in", "a", FAKE30.lh),
  b64Row("base64 of a hub token, two bytes in", "ab", FAKE30.lh),
  b64Row("base64 of a hub token after a JSON key", '{"token":"', FAKE30.lh),
  b64Row("base64 of an OAuth refresh token", "x", FAKE30.lhr),
  b64Row("base64 of an enrolment code", "code ", FAKE30.lhe),
  redacted("base64url of a hub token", `${Buffer.from(`t=${FAKE30.lh}?`).toString("base64url")}`, (() => {
    const enc = Buffer.from(`t=${FAKE30.lh}?`).toString("base64url");
    return enc.slice(0, 3) + R("leasehold_token") + enc.slice(Math.ceil((8 * 37) / 6));
  })(), ["leasehold_token"]),
  redacted("hex of a hub token", `${Buffer.from(FAKE30.lh).toString("hex")}\n`, `${R("leasehold_token")}\n`, ["leasehold_token"]),
  redacted("upper-case hex of an enrolment code", `${Buffer.from(FAKE30.lhe).toString("hex").toUpperCase()}`, R("leasehold_token"), ["leasehold_token"]),
];

export const SEVEN_FORMATS: ScrubCase[] = [
  redacted("YAML password:", `db:\n  host: db.internal\n  password: Sup3r S3cret\n  port: 5432\n`, `db:\n  host: db.internal\n  password: ${R("secret_assignment")}\n  port: 5432\n`, ["secret_assignment"]),
  redacted("YAML quoted password in a list", `- name: app\n- "db_password": "p@ss:w0rd"\n`, `- name: app\n- "db_password": "${R("secret_assignment")}"\n`, ["secret_assignment"]),
  redacted("YAML password: at the start", "password: hunter2", `password: ${R("secret_assignment")}`, ["secret_assignment"]),
  redacted(".netrc on one line", `machine api.example.com login bob password s3cr3t-pw\n`, `machine api.example.com login bob password ${R("netrc_password")}\n`, ["netrc_password"]),
  redacted(".netrc across lines, default entry", `default\n  login anonymous\n  password me@example.org\n`, `default\n  login anonymous\n  password ${R("netrc_password")}\n`, ["netrc_password"]),
  redacted(
    "Azure storage AccountKey",
    `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${FAKE30.azureKey};EndpointSuffix=core.windows.net`,
    `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=${R("azure_storage_key")};EndpointSuffix=core.windows.net`,
    ["azure_storage_key"],
  ),
  redacted("age secret key", `# public key: age1xyz\n${FAKE30.age}\n`, `# public key: age1xyz\n${R("age_secret_key")}\n`, ["age_secret_key"]),
  redacted("PyPI token", `password = ${FAKE30.pypi}`, `password = ${R("pypi_token")}`, ["pypi_token"]),
  redacted("PyPI token alone", `TWINE ${FAKE30.pypi}\n`, `TWINE ${R("pypi_token")}\n`, ["pypi_token"]),
  redacted("Telegram bot token", `https://api.telegram.org/bot${FAKE30.telegram}/getMe`, `https://api.telegram.org/bot7312345678:${R("telegram_bot_token")}/getMe`, ["telegram_bot_token"]),
  redacted("curl -u user:pass", `+ curl -sS -u admin:Pa55w0rd https://x/api\n`, `+ curl -sS -u admin:${R("basic_auth")} https://x/api\n`, ["basic_auth"]),
  redacted("curl --user 'user:pass'", `curl --user 'bob:two words' -X POST`, `curl --user 'bob:${R("basic_auth")}' -X POST`, ["basic_auth"]),
];

export const SPELLING_NEAR_MISSES: ScrubCase[] = [
  untouched("netrc entry without a password", "machine example.com login bob\n"),
  untouched("curl -u user (curl prompts)", "curl -u bob https://example.com/\n"),
  untouched("sort -u with a colon, no curl", "sort -u a:b\n"),
  untouched("telegram-like without the AA secret", "at 12345678:00 and 12:34:56\n"),
  untouched("age public key", "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\n"),
  untouched("backslash escapes that decode to ordinary text", "C:\\x41\\u0042 path\\n"),
  untouched("emoji joined by zero-width joiners", "family \u{1f468}\u200d\u{1f469}\u200d\u{1f467}\n"),
  untouched("base64 of ordinary text", Buffer.from("the quick brown fox jumps over the lazy dog, twice over").toString("base64")),
  untouched("YAML key without a secret word", "user: bob\nhost: db\n"),
  untouched("YAML password from a variable or a template", "password: ${DB_PASSWORD}\npassword: {{ vault_pw }}\n"),
];

/** Whole-text corpus: the original rows, the issue-12 rows, and the spelling/format rows. */
export const ALL_CASES: ScrubCase[] = [...CORPUS, ...REVIEW_FORMATS, ...ENCODED_VARIANTS, ...REVIEW_NEAR_MISSES, ...SPELLINGS, ...SEVEN_FORMATS, ...SPELLING_NEAR_MISSES];

/**
 * Out of reach by design: a pattern cannot see a secret re-encoded by the
 * workload. Listed so the limit is tested as a limit (these pass unchanged).
 */
export const OUT_OF_REACH: Array<{ name: string; input: Buffer }> = [
  { name: "base64 of a github token", input: Buffer.from(Buffer.from(FAKE.ghp).toString("base64")) },
  { name: "hex of a github token", input: Buffer.from(Buffer.from(FAKE.ghp).toString("hex")) },
  { name: "reversed github token", input: Buffer.from([...FAKE.ghp].reverse().join("")) },
  { name: "gzip of a github token", input: Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, ...Buffer.from(FAKE.ghp).map((b) => b ^ 0x5a)]) },
  { name: "token split by the workload across lines", input: Buffer.from(`${FAKE.ghp.slice(0, 10)}\n${FAKE.ghp.slice(10)}\n`) },
];
