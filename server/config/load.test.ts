import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig, redactDatabaseUrl } from "./load";

const cwd = "/srv/checkout";

describe("loadConfig", () => {
  it("LEASEHOLD_OAUTH_CLIENT_URL_ALLOW is a lower-cased host list; anything else is refused naming the variable", () => {
    const r = loadConfig({ LEASEHOLD_OAUTH_CLIENT_URL_ALLOW: " LocalHost, 127.0.0.1 ,," }, cwd);
    expect(r.ok && r.config.oauth).toEqual({ clientUrlAllow: ["localhost", "127.0.0.1"] });
    const bad = loadConfig({ LEASEHOLD_OAUTH_CLIENT_URL_ALLOW: "https://evil.example/x" }, cwd);
    expect(bad).toMatchObject({ ok: false, variable: "LEASEHOLD_OAUTH_CLIENT_URL_ALLOW" });
  });

  it("applies the documented defaults", () => {
    const r = loadConfig({}, cwd);
    expect(r).toEqual({
      ok: true,
      config: {
        host: "127.0.0.1",
        port: 8700,
        dataDir: path.join(cwd, ".leasehold"),
        publicUrl: "http://127.0.0.1:8700",
        database: { kind: "pglite", pgliteDir: path.join(cwd, ".leasehold", "pg") },
        mcp: {
          allowedOrigins: [],
          approvalWaitS: 25,
          maxBodyBytes: 4 * 1024 * 1024,
          maxHeaderBytes: 8 * 1024,
          maxJsonDepth: 64,
          maxConcurrentRequests: 32,
          maxStreams: 8,
          ratePerMinute: 600,
          sessionIdleS: 600,
          sessionMaxS: 86_400,
          sessionsPerToken: 32,
          maxHeldPerToken: 20,
          cancelHeldOnDelete: true,
        },
        localGuest: true,
        jobs: { heartbeatLostMs: 10_000, claimWaitMs: 10_000, slotsPerToken: 3 },
        output: { quotaTokenBytes: 256 * 1024 * 1024, quotaHostBytes: 1024 * 1024 * 1024, retentionMs: 7 * 86_400_000 },
        artifacts: { maxBytes: 128 * 1024 * 1024, quotaBytes: 512 * 1024 * 1024 },
        oauth: { clientUrlAllow: [] },
        passkeyApprovalRisk: "high",
        fourEyesCritical: false,
        publicUrlSet: false,
        webhook: null,
        keyDir: path.join(cwd, ".leasehold"),
        trustedProxies: [],
        connectionsPerAddress: 64,
        drainMs: 30_000,
      },
    });
  });

  it("replica settings: a key directory, trusted proxies as CIDRs, the connection cap and the drain bound; bad values refused by name", () => {
    expect(loadConfig({ LEASEHOLD_KEY_DIR: "keys", LEASEHOLD_CONNECTIONS_PER_ADDRESS: "1000", LEASEHOLD_DRAIN_S: "5" }, cwd)).toMatchObject({
      ok: true,
      config: { keyDir: path.join(cwd, "keys"), connectionsPerAddress: 1000, drainMs: 5000 },
    });
    expect(loadConfig({ LEASEHOLD_TRUSTED_PROXIES: "10.0.0.0/8, 192.0.2.7" }, cwd)).toMatchObject({
      ok: true,
      config: { trustedProxies: [{ address: "10.0.0.0", prefix: 8, family: "ipv4" }, { address: "192.0.2.7", prefix: 32, family: "ipv4" }] },
    });
    for (const [variable, value] of [
      ["LEASEHOLD_TRUSTED_PROXIES", "10.0.0.0/33"],
      ["LEASEHOLD_TRUSTED_PROXIES", "proxy.example.org"],
      ["LEASEHOLD_CONNECTIONS_PER_ADDRESS", "0"],
      ["LEASEHOLD_DRAIN_S", "-1"],
      ["LEASEHOLD_KEY_DIR", ""],
    ] as const) {
      expect(loadConfig({ [variable]: value }, cwd), `${variable}=${value}`).toMatchObject({ ok: false, variable });
    }
  });

  it("LEASEHOLD_PASSKEY_APPROVAL_RISK: high by default, critical or off when set, anything else refused by name", () => {
    expect(loadConfig({ LEASEHOLD_PASSKEY_APPROVAL_RISK: "critical" }, cwd)).toMatchObject({ ok: true, config: { passkeyApprovalRisk: "critical" } });
    expect(loadConfig({ LEASEHOLD_PASSKEY_APPROVAL_RISK: "off" }, cwd)).toMatchObject({ ok: true, config: { passkeyApprovalRisk: "off" } });
    expect(loadConfig({ LEASEHOLD_FOUR_EYES_CRITICAL: "1" }, cwd)).toMatchObject({ ok: true, config: { fourEyesCritical: true } });
    expect(loadConfig({ LEASEHOLD_FOUR_EYES_CRITICAL: "yes" }, cwd)).toMatchObject({ ok: false });
    const bad = loadConfig({ LEASEHOLD_PASSKEY_APPROVAL_RISK: "medium" }, cwd);
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.variable).toBe("LEASEHOLD_PASSKEY_APPROVAL_RISK");
    expect(!bad.ok && bad.message).toContain("must be high, critical or off");
    expect(loadConfig({ LEASEHOLD_PUBLIC_URL: "https://admin.example.org" }, cwd)).toMatchObject({ ok: true, config: { publicUrlSet: true } });
  });

  it("approval webhook: URL and secret together, refused alone, a short secret refused without echoing it", () => {
    const ok = loadConfig({ LEASEHOLD_WEBHOOK_URL: "https://hooks.example.org/leasehold", LEASEHOLD_WEBHOOK_SECRET: "s3cret-s3cret-s3cret" }, cwd);
    expect(ok.ok && ok.config.webhook).toEqual({ url: "https://hooks.example.org/leasehold", secret: "s3cret-s3cret-s3cret" });
    expect(loadConfig({ LEASEHOLD_WEBHOOK_URL: "https://hooks.example.org/x" }, cwd)).toMatchObject({ ok: false, variable: "LEASEHOLD_WEBHOOK_SECRET" });
    expect(loadConfig({ LEASEHOLD_WEBHOOK_SECRET: "s3cret-s3cret-s3cret" }, cwd)).toMatchObject({ ok: false, variable: "LEASEHOLD_WEBHOOK_URL" });
    const short = loadConfig({ LEASEHOLD_WEBHOOK_URL: "https://hooks.example.org/x", LEASEHOLD_WEBHOOK_SECRET: "tooshort" }, cwd);
    expect(short).toMatchObject({ ok: false, variable: "LEASEHOLD_WEBHOOK_SECRET" });
    expect(short.ok ? "" : short.message).not.toContain("tooshort");
    expect(loadConfig({ LEASEHOLD_WEBHOOK_URL: "ftp://x", LEASEHOLD_WEBHOOK_SECRET: "s3cret-s3cret-s3cret" }, cwd)).toMatchObject({ ok: false, variable: "LEASEHOLD_WEBHOOK_URL" });
  });

  it("guest job windows: whole seconds, a heartbeat window of at least 6 s (three missed heartbeats), refused by name", () => {
    const ok = loadConfig({ LEASEHOLD_JOB_HEARTBEAT_LOST_S: "60", LEASEHOLD_JOB_CLAIM_WAIT_S: "30" }, cwd);
    expect(ok.ok && ok.config.jobs).toEqual({ heartbeatLostMs: 60_000, claimWaitMs: 30_000, slotsPerToken: 3 });
    expect(loadConfig({ LEASEHOLD_JOB_HEARTBEAT_LOST_S: "5" }, cwd)).toMatchObject({ ok: false, variable: "LEASEHOLD_JOB_HEARTBEAT_LOST_S" });
    expect(loadConfig({ LEASEHOLD_JOB_CLAIM_WAIT_S: "0" }, cwd)).toMatchObject({ ok: false, variable: "LEASEHOLD_JOB_CLAIM_WAIT_S" });
    expect(loadConfig({ LEASEHOLD_JOB_CLAIM_WAIT_S: "1.5" }, cwd)).toMatchObject({ ok: false, variable: "LEASEHOLD_JOB_CLAIM_WAIT_S" });
  });

  it("fair share and output quotas/retention: accepted, defaulted, refused by name", () => {
    const defaults = loadConfig({}, cwd);
    expect(defaults.ok && defaults.config.output).toEqual({ quotaTokenBytes: 256 * 1024 * 1024, quotaHostBytes: 1024 * 1024 * 1024, retentionMs: 7 * 86_400_000 });
    const set = loadConfig(
      { LEASEHOLD_JOB_SLOTS_PER_TOKEN: "2", LEASEHOLD_OUTPUT_QUOTA_TOKEN_BYTES: "2097152", LEASEHOLD_OUTPUT_QUOTA_HOST_BYTES: "4194304", LEASEHOLD_OUTPUT_RETENTION_S: "3600" },
      cwd,
    );
    expect(set.ok && set.config.jobs.slotsPerToken).toBe(2);
    expect(set.ok && set.config.output).toEqual({ quotaTokenBytes: 2_097_152, quotaHostBytes: 4_194_304, retentionMs: 3_600_000 });
    expect(loadConfig({ LEASEHOLD_JOB_SLOTS_PER_TOKEN: "0" }, cwd)).toMatchObject({ ok: false, variable: "LEASEHOLD_JOB_SLOTS_PER_TOKEN" });
    expect(loadConfig({ LEASEHOLD_OUTPUT_QUOTA_TOKEN_BYTES: "1000" }, cwd)).toMatchObject({ ok: false, variable: "LEASEHOLD_OUTPUT_QUOTA_TOKEN_BYTES" });
    expect(loadConfig({ LEASEHOLD_OUTPUT_QUOTA_HOST_BYTES: "1e9" }, cwd)).toMatchObject({ ok: false, variable: "LEASEHOLD_OUTPUT_QUOTA_HOST_BYTES" });
    expect(loadConfig({ LEASEHOLD_OUTPUT_RETENTION_S: "10" }, cwd)).toMatchObject({ ok: false, variable: "LEASEHOLD_OUTPUT_RETENTION_S" });
  });

  it("artifact size cap and quota: defaulted, accepted, refused by name", () => {
    const defaults = loadConfig({}, cwd);
    expect(defaults.ok && defaults.config.artifacts).toEqual({ maxBytes: 128 * 1024 * 1024, quotaBytes: 512 * 1024 * 1024 });
    const set = loadConfig({ LEASEHOLD_ARTIFACT_MAX_BYTES: "1048576", LEASEHOLD_ARTIFACT_QUOTA_BYTES: "4194304" }, cwd);
    expect(set.ok && set.config.artifacts).toEqual({ maxBytes: 1_048_576, quotaBytes: 4_194_304 });
    expect(loadConfig({ LEASEHOLD_ARTIFACT_MAX_BYTES: "12MiB" }, cwd)).toMatchObject({ ok: false, variable: "LEASEHOLD_ARTIFACT_MAX_BYTES" });
    expect(loadConfig({ LEASEHOLD_ARTIFACT_QUOTA_BYTES: "0" }, cwd)).toMatchObject({ ok: false, variable: "LEASEHOLD_ARTIFACT_QUOTA_BYTES" });
  });

  it("LEASEHOLD_LOCAL_GUEST is 0 or 1, refused by name otherwise", () => {
    const off = loadConfig({ LEASEHOLD_LOCAL_GUEST: "0" }, cwd);
    expect(off.ok && off.config.localGuest).toBe(false);
    const bad = loadConfig({ LEASEHOLD_LOCAL_GUEST: "yes" }, cwd);
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.variable).toBe("LEASEHOLD_LOCAL_GUEST");
  });

  it("parses the MCP settings and refuses bad ones by name", () => {
    const ok = loadConfig({ LEASEHOLD_MCP_APPROVAL_WAIT_S: "0", LEASEHOLD_MCP_ALLOWED_ORIGINS: "https://a.example, http://localhost:3000" }, cwd);
    expect(ok.ok && ok.config.mcp.approvalWaitS).toBe(0);
    expect(ok.ok && ok.config.mcp.allowedOrigins).toEqual(["https://a.example", "http://localhost:3000"]);
    expect(loadConfig({ LEASEHOLD_MCP_ALLOWED_ORIGINS: "https://a.example/path" }, cwd)).toMatchObject({ ok: false, variable: "LEASEHOLD_MCP_ALLOWED_ORIGINS" });
    expect(loadConfig({ LEASEHOLD_MCP_APPROVAL_WAIT_S: "-1" }, cwd)).toMatchObject({ ok: false, variable: "LEASEHOLD_MCP_APPROVAL_WAIT_S" });
    expect(loadConfig({ LEASEHOLD_MCP_RATE_PER_MINUTE: "0" }, cwd)).toMatchObject({ ok: false, variable: "LEASEHOLD_MCP_RATE_PER_MINUTE" });
  });

  it("LEASEHOLD_APPROVAL_ORPHANED_S is accepted from 10 s and refused by name below it", () => {
    expect(loadConfig({ LEASEHOLD_APPROVAL_ORPHANED_S: "10" }, cwd).ok).toBe(true);
    expect(loadConfig({ LEASEHOLD_APPROVAL_ORPHANED_S: "9" }, cwd)).toMatchObject({ ok: false, variable: "LEASEHOLD_APPROVAL_ORPHANED_S" });
  });

  it("uses a real server when DATABASE_URL is set", () => {
    const r = loadConfig({ DATABASE_URL: "postgres://u:p@db.internal:5432/lh" }, cwd);
    expect(r.ok && r.config.database).toEqual({ kind: "postgres", url: "postgres://u:p@db.internal:5432/lh" });
  });

  it("brackets an IPv6 host in the default public URL and strips a trailing slash from an explicit one", () => {
    const a = loadConfig({ LEASEHOLD_HOST: "::1", LEASEHOLD_PORT: "9000" }, cwd);
    expect(a.ok && a.config.publicUrl).toBe("http://[::1]:9000");
    const b = loadConfig({ LEASEHOLD_PUBLIC_URL: "https://hub.example.org/" }, cwd);
    expect(b.ok && b.config.publicUrl).toBe("https://hub.example.org");
  });

  it.each([
    ["LEASEHOLD_PORT", "0"],
    ["LEASEHOLD_PORT", "65536"],
    ["LEASEHOLD_PORT", "80a"],
    ["LEASEHOLD_PORT", ""],
    ["LEASEHOLD_PORT", " 8700"],
    ["LEASEHOLD_HOST", ""],
    ["LEASEHOLD_HOST", "bad host"],
    ["LEASEHOLD_DATA_DIR", ""],
    ["LEASEHOLD_PUBLIC_URL", "ftp://x"],
    ["LEASEHOLD_PUBLIC_URL", "not a url"],
    ["LEASEHOLD_PUBLIC_URL", "http://x/?a=1"],
    ["DATABASE_URL", "mysql://x/y"],
    ["DATABASE_URL", ""],
    ["DATABASE_URL", "postgres:///nohost"],
  ])("refuses %s=%j naming the variable", (name, value) => {
    const r = loadConfig({ [name]: value }, cwd);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.variable).toBe(name);
      expect(r.message.startsWith(name)).toBe(true);
      expect(r.message).not.toContain("\n");
    }
  });

  it("refuses an unknown LEASEHOLD_ variable (a typo must not leave a default in force)", () => {
    const r = loadConfig({ LEASEHOLD_PROT: "9000" }, cwd);
    expect(r).toMatchObject({ ok: false, variable: "LEASEHOLD_PROT" });
  });

  it("accepts LEASEHOLD_BPF_TIER (the local guest's tier cap) and refuses a value that is not a tier", () => {
    expect(loadConfig({ LEASEHOLD_BPF_TIER: "B" }, cwd).ok).toBe(true);
    expect(loadConfig({ LEASEHOLD_BPF_TIER: "b" }, cwd)).toMatchObject({ ok: false, variable: "LEASEHOLD_BPF_TIER" });
  });

  it("ignores variables outside its namespace", () => {
    expect(loadConfig({ PATH: "/bin", PORT: "x", NODE_ENV: "test" }, cwd).ok).toBe(true);
  });

  it("never echoes a DATABASE_URL (it may hold a password) in an error", () => {
    const r = loadConfig({ DATABASE_URL: "mysql://user:s3cret@h/db" }, cwd);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).not.toContain("s3cret");
  });
});

describe("redactDatabaseUrl", () => {
  it("hides the password", () => {
    expect(redactDatabaseUrl("postgres://u:s3cret@h:5432/db")).toBe("postgres://u:***@h:5432/db");
    expect(redactDatabaseUrl("postgres://h/db")).toBe("postgres://h/db");
  });
});
