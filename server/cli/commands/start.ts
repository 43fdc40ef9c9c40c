import type http from "node:http";
import { adminUrlFor, isLoopbackHost } from "../../passkeys/relying-party";
import { loadConfig, redactDatabaseUrl } from "../../config";
import { LeaseholdError } from "../../errors";
import { bindHttpServer, DEFAULT_HTTP_LIMITS, type RequestListener } from "../../hub/listen";
import { logKeyId } from "../../hub/identity";
import { whenMcpCallsDone } from "../../mcp/endpoint";
import { createHubRuntime, installHubRuntime } from "../../hub/runtime";
import { actionPipelineFor, startApprovedDispatch, type ApprovedDispatch } from "../../actions";
import { HUB_VERSION } from "../../hub/version";
import { listenControlSocket } from "../../hub/control-socket";
import { EXIT, formatError } from "../io";
import { parseCommandArgs } from "../args";
import type { CliContext } from "../context";
import { hubContext } from "../hub-context";
import { issueFirstAdmin, issueFirstAgentToken } from "../../hub/first-run";
import { startLocalGuest, type RunningLocalGuest } from "../../hosts/local-guest";
import { projectPath } from "../../../common/paths";

/** The guest executable in this checkout (it runs the compiled guest in dist/). */
const guestBin = (): string => projectPath("bin", "leasehold-guest.mjs");

export const startCommand = {
  name: "start",
  summary: "start the hub (web admin, API) on LEASEHOLD_HOST:LEASEHOLD_PORT",
  usage: "leasehold start",
  // eslint-disable-next-line max-lines-per-function -- start-up in order: bind, runtime, printed credentials, local guest, drain and stop — one sequence
  async run(args: string[], ctx: CliContext): Promise<number> {
    parseCommandArgs(args, {});
    const began = performance.now();
    const parsed = loadConfig(ctx.env, ctx.cwd);
    if (!parsed.ok) {
      ctx.err(`leasehold: ${parsed.message} [CONFIG_INVALID]`);
      return EXIT.failure;
    }
    const config = parsed.config;
    // From here on a SIGINT/SIGTERM is a request to stop cleanly, even if it
    // arrives while the hub is still starting (it then stops right after).
    const stopRequest = captureStopSignals(ctx);
    let listener: Awaited<ReturnType<typeof bindHttpServer>> | undefined;
    let runtime: Awaited<ReturnType<typeof createHubRuntime>> | undefined;
    let control: Awaited<ReturnType<typeof listenControlSocket>> | undefined;
    let approved: ApprovedDispatch | undefined;
    try {
      listener = await bindHttpServer(config.host, config.port, { ...DEFAULT_HTTP_LIMITS, connectionsPerAddress: config.connectionsPerAddress ?? DEFAULT_HTTP_LIMITS.connectionsPerAddress });
      runtime = await createHubRuntime(config);
      installHubRuntime(runtime);
      // Approved actions nobody is dispatching (their waiter's process died, or nobody waits) are
      // dispatched by whichever hub process sees them first (server/actions/approved.ts).
      approved = startApprovedDispatch(actionPipelineFor(runtime).deps, {
        onError: (error) => ctx.err(`leasehold: approved-action dispatch failed: ${formatError(error)}`),
      });
      const web = await ctx.loadWeb();
      const handler: RequestListener = await web.createRequestHandler({
        hostname: config.host,
        port: config.port,
        server: listener.server,
      });
      listener.setHandler(handler);
      const hubRuntime = runtime;
      control = await listenControlSocket(config.dataDir, async (request, output) => {
        // Imported lazily: main.ts lists this command, so a static import would be circular.
        const { main } = await import("../main");
        return main(request.argv, hubContext(hubRuntime, request, output));
      });
    } catch (error) {
      await listener?.close();
      await approved?.stop();
      await runtime?.close().catch(() => undefined);
      stopRequest.dispose();
      ctx.err(formatError(error));
      return EXIT.failure;
    }
    const seconds = ((performance.now() - began) / 1000).toFixed(1);
    const db = runtime.database;
    const where = db.handle.kind === "pglite" ? `pglite (${db.handle.location})` : `postgres (${redactDatabaseUrl(config.database.url ?? "")})`;
    ctx.out(`Leasehold ${HUB_VERSION} — hub ready in ${seconds} s`);
    // http://localhost:PORT when listening on loopback without a public URL: a secure context with a
    // domain, so passkeys work there (WebAuthn refuses an IP address as relying-party id).
    ctx.out(`  admin URL:  ${adminUrlFor(config, config.publicUrlSet === true)}/`);
    ctx.out(`  health:     ${config.publicUrl}/api/health`);
    const plain = plainHttpWarning(config.publicUrl);
    if (plain !== null) ctx.err(`leasehold: warning: ${plain}`);
    ctx.out(`  database:   ${where}, ${db.migrations.applied}/${db.migrations.known} migrations applied`);
    ctx.out(`  data dir:   ${config.dataDir}`);
    // Every replica on one database prints the same two ids (docs/deploy.md#identity).
    ctx.out(`  keys:       job-signing ${runtime.keys.job.keyId}, ledger log ${logKeyId(runtime.keys.log.verifier)} (in ${runtime.keys.dir})`);
    try {
      for (const line of await issueFirstAdmin(db.handle.db)) ctx.out(line);
    } catch (error) {
      ctx.err(`leasehold: warning: no first admin created: ${formatError(error)}`);
    }
    try {
      for (const line of await issueFirstAgentToken(db.handle.db, config)) ctx.out(line);
    } catch (error) {
      ctx.err(`leasehold: warning: no first MCP token issued: ${formatError(error)}`);
    }
    if ("unavailable" in control) ctx.err(`leasehold: warning: no control socket: ${control.unavailable}`);
    let localGuest: RunningLocalGuest | undefined;
    if (config.localGuest) {
      try {
        localGuest = (await startLocalGuest(config, db.handle.db, guestBin(), (line) => ctx.err(line))) ?? undefined;
        if (localGuest !== undefined) ctx.out(`  local guest: host "local" (leasehold-guest, pid ${localGuest.process.pid}; LEASEHOLD_LOCAL_GUEST=0 turns it off)`);
      } catch (error) {
        ctx.err(`leasehold: warning: local guest not started: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    ctx.out("  stop with Ctrl-C");
    const controlSocket = control;
    const drainingRuntime = runtime;
    const approvedDispatch = approved;
    return await waitForStop(ctx, stopRequest, listener, {
      // Readiness turns 503 and new MCP calls are refused; calls already running may finish.
      drain: async () => {
        drainingRuntime.lifecycle.draining = true;
        const drainMs = config.drainMs ?? 30_000;
        ctx.out(`leasehold: draining: /api/ready answers 503, new MCP calls are refused; in-flight calls have up to ${Math.round(drainMs / 1000)} s`);
        const left = await whenMcpCallsDone(drainingRuntime, drainMs);
        if (left > 0) ctx.err(`leasehold: warning: ${left} MCP call(s) still running after ${Math.round(drainMs / 1000)} s; stopping anyway`);
      },
      // The local guest goes first: it would only retry against a closed port.
      beforeListener: async () => {
        await localGuest?.stop();
      },
      close: async () => {
        if ("close" in controlSocket) await controlSocket.close();
        await approvedDispatch?.stop();
        await runtime.close();
      },
    });
  },
};

/**
 * The admin over plain HTTP anywhere but loopback: session cookies cannot be
 * Secure there and travel, with every password, in the clear.
 */
export function plainHttpWarning(publicUrl: string): string | null {
  const url = new URL(publicUrl);
  if (url.protocol !== "http:" || isLoopbackHost(url.hostname)) return null;
  return `the admin is served over plain HTTP at ${url.origin}: passwords and session cookies cross the network unencrypted, and cookies cannot be Secure. Put a TLS proxy in front and set LEASEHOLD_PUBLIC_URL to its https:// URL`;
}

interface StopRequest {
  signal: Promise<NodeJS.Signals>;
  dispose(): void;
}

/**
 * Installs the stop handlers. Ctrl-C reaches the hub from the terminal and
 * again from npm and tools/start.mjs forwarding it; only a repeat after a
 * pause forces an exit without a clean close.
 */
function captureStopSignals(ctx: CliContext): StopRequest {
  let stoppingSince = 0;
  let resolveSignal: (signal: NodeJS.Signals) => void = () => undefined;
  const signal = new Promise<NodeJS.Signals>((resolve) => (resolveSignal = resolve));
  const stop = (received: NodeJS.Signals) => {
    if (stoppingSince !== 0) {
      if (Date.now() - stoppingSince < 2000) return;
      ctx.err(`leasehold: ${received} again, exiting without a clean close`);
      process.exit(EXIT.failure);
    }
    stoppingSince = Date.now();
    resolveSignal(received);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  return {
    signal,
    dispose() {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
    },
  };
}

/** Resolves with the exit code once a stop signal has closed everything. */
async function waitForStop(
  ctx: CliContext,
  stopRequest: StopRequest,
  listener: { close(): Promise<void>; server: http.Server },
  runtime: { drain(): Promise<void>; beforeListener(): Promise<void>; close(): Promise<void> },
): Promise<number> {
  const signal = await stopRequest.signal;
  ctx.out(`leasehold: ${signal} received, stopping`);
  try {
    await runtime.drain();
    await runtime.beforeListener();
    // Close the database last: in-flight requests may still need it.
    await listener.close();
    await runtime.close();
    return EXIT.ok;
  } catch (error) {
    ctx.err(formatError(error instanceof LeaseholdError ? error : new LeaseholdError("INTERNAL", String(error))));
    return EXIT.failure;
  }
}
