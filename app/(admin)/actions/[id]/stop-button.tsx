"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "~/app/_components/trpc";
import { ErrorState } from "~/app/_components/ui";
import { errorText } from "~/app/_lib/errors";

/** States a stop can still change (docs/design.md#cancel); the server decides, this only hides a button that would be refused. */
const STOPPABLE = new Set(["held", "allowed", "approved", "dispatched"]);

/** The admin's stop button on one action: the hub withdraws it, or stops it on its host. */
export function StopButton({ id, state }: { id: string; state: string }) {
  const trpc = useTRPC();
  const queries = useQueryClient();
  const stop = useMutation(trpc.actions.stop.mutationOptions({ onSettled: () => queries.invalidateQueries({ queryKey: trpc.actions.get.queryKey({ id }) }) }));
  if (!STOPPABLE.has(state) && !stop.isSuccess && !stop.isError) return null;
  return (
    <>
      {STOPPABLE.has(state) ? (
        <button type="button" className="danger" data-testid="stop-action" disabled={stop.isPending} onClick={() => stop.mutate({ id })}>
          {stop.isPending ? "Stopping…" : "Stop"}
        </button>
      ) : null}
      {stop.isSuccess ? (
        <p role="status" data-testid="stop-result">
          {stop.data.state === "cancelled" ? "Stopped" : "Stopping"} ({stop.data.stage === "running" ? "it was running; its sandbox was killed" : "it never ran"}).
        </p>
      ) : null}
      {stop.isError ? <ErrorState>{errorText(stop.error)}</ErrorState> : null}
    </>
  );
}
