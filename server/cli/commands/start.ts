import type http from "node:http";
import { loadConfig, redactDatabaseUrl } from "../../config";
import { LeaseholdError } from "../../errors";
import { bindHttpServer, type RequestListener } from "../../hub/listen";
import { createHubRuntime, installHubRuntime } from "../../hub/runtime";
import { HUB_VERSION } from "../../hub/version";
import { listenControlSocket } from "../../hub/control-socket";
import { EXIT, formatError } from "../io";
import type { CliContext } from "../context";
import { hubContext } from "../hub-context";

export const startCommand = {
  name: "start",
  summary: "start the hub (web admin, API) on LEASEHOLD_HOST:LEASEHOLD_PORT",
  usage: "leasehold start",
  async run(args: string[], ctx: CliContext): Promise<number> {
    if (args.length > 0) {
      ctx.err(`leasehold start: unexpected argument ${JSON.stringify(args[0])}`);
      return EXIT.usage;
    }
    const began = performance.now();
    const parsed = loadConfig(ctx.env, ctx.cwd);
    if (!parsed.ok) {
      ctx.err(`leasehold: ${parsed.message} [CONFIG_INVALID]`);
      return EXIT.failure;
    }
    const config = parsed.config;
    let listener: Awaited<ReturnType<typeof bindHttpServer>> | undefined;
    let runtime: Awaited<ReturnType<typeof createHubRuntime>> | undefined;
    let control: Awaited<ReturnType<typeof listenControlSocket>> | undefined;
    try {
      listener = await bindHttpServer(config.host, config.port);
      runtime = await createHubRuntime(config);
      installHubRuntime(runtime);
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
      await runtime?.close().catch(() => undefined);
      ctx.err(formatError(error));
      return EXIT.failure;
    }
    const seconds = ((performance.now() - began) / 1000).toFixed(1);
    const db = runtime.database;
    const where = db.handle.kind === "pglite" ? `pglite (${db.handle.location})` : `postgres (${redactDatabaseUrl(config.database.url ?? "")})`;
    ctx.out(`Leasehold ${HUB_VERSION} — hub ready in ${seconds} s`);
    ctx.out(`  admin URL:  ${config.publicUrl}/`);
    ctx.out(`  health:     ${config.publicUrl}/api/health`);
    ctx.out(`  database:   ${where}, ${db.migrations.applied}/${db.migrations.known} migrations applied`);
    ctx.out(`  data dir:   ${config.dataDir}`);
    if ("unavailable" in control) ctx.err(`leasehold: warning: no control socket: ${control.unavailable}`);
    ctx.out("  stop with Ctrl-C");
    const controlSocket = control;
    return await waitForStop(ctx, listener, {
      close: async () => {
        if ("close" in controlSocket) await controlSocket.close();
        await runtime.close();
      },
    });
  },
};

/** Resolves with the exit code once SIGINT/SIGTERM has closed everything. */
function waitForStop(
  ctx: CliContext,
  listener: { close(): Promise<void>; server: http.Server },
  runtime: { close(): Promise<void> },
): Promise<number> {
  return new Promise((resolve) => {
    let stoppingSince = 0;
    const stop = (signal: NodeJS.Signals) => {
      // Ctrl-C reaches the hub from the terminal and again from npm and
      // tools/start.mjs forwarding it; only a repeat after a pause forces exit.
      if (stoppingSince !== 0) {
        if (Date.now() - stoppingSince < 2000) return;
        ctx.err(`leasehold: ${signal} again, exiting without a clean close`);
        process.exit(EXIT.failure);
      }
      stoppingSince = Date.now();
      ctx.out(`leasehold: ${signal} received, stopping`);
      // Close the database last: in-flight requests may still need it.
      listener
        .close()
        .then(() => runtime.close())
        .then(
          () => resolve(EXIT.ok),
          (error: unknown) => {
            ctx.err(formatError(error instanceof LeaseholdError ? error : new LeaseholdError("INTERNAL", String(error))));
            resolve(EXIT.failure);
          },
        );
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
