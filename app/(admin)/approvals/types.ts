import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "~/server/trpc";

type Outputs = inferRouterOutputs<AppRouter>;
/** One page of the queue, as `approvals.list` returns it. */
export type ApprovalPageData = Outputs["approvals"]["list"];
/** One held action in full (server/approvals/view.ts PreparedActionView). */
export type HeldAction = ApprovalPageData["items"][number];
export type GrantProposalData = Outputs["approvals"]["proposeGrant"];
export type BatchResult = Outputs["approvals"]["batch"]["results"][number];
