import { useEffect, useState } from 'react';
import { z } from 'zod';
import type { ApprovalRequest } from '../../../../shared/schemas/approval';
import type { RunEvent } from '../../../../shared/schemas/events';
import { useAppStore } from '../../store/use-app-store';

const StepIdsSchema = z.object({ steps: z.array(z.object({ id: z.string() })) });

/** The plan a re-plan follows: the last plan of the run the operator rejected before this request. */
export interface PlanChange {
  added: string[];
  removed: string[];
}

/** Who a request comes from when its run is a sub-agent's: the parent's goal and the step that started it. */
export interface SubagentOrigin {
  parentGoal: string;
  stepId: string | null;
}

export interface ApprovalOrigin {
  /** Set when this plan request follows a rejected plan: the step ids it adds and drops. */
  replan: PlanChange | null;
  subagent: SubagentOrigin | null;
}

const NONE: ApprovalOrigin = { replan: null, subagent: null };

function stepIds(action: unknown): string[] | null {
  const parsed = StepIdsSchema.safeParse(action);
  return parsed.success ? parsed.data.steps.map((step) => step.id) : null;
}

/** The steps of the last plan the operator rejected in these events, other than the request itself. */
function rejectedPlanIds(events: readonly RunEvent[], requestId: string): string[] | null {
  const rejected = new Set(events.flatMap((event) => (event.type === 'approval.resolved' && event.status === 'rejected' ? [event.approvalId] : [])));
  const previous = events.filter((event) => event.type === 'approval.requested' && event.kind === 'plan' && event.approvalId !== requestId && rejected.has(event.approvalId)).at(-1);
  return previous?.type === 'approval.requested' ? stepIds(previous.action) : null;
}

function planChange(now: readonly string[] | null, requestId: string, events: readonly RunEvent[]): PlanChange | null {
  const before = now ? rejectedPlanIds(events, requestId) : null;
  if (!now || !before) return null;
  return { added: now.filter((id) => !before.includes(id)), removed: before.filter((id) => !now.includes(id)) };
}

/** The step of the parent run that started `childRunId`. */
function spawningStep(events: readonly RunEvent[], childRunId: string): string | null {
  const started = events.find((event) => event.type === 'subagent.started' && event.childRunId === childRunId);
  return started?.type === 'subagent.started' ? started.stepId : null;
}

/**
 * What the request's run history says about it, read once when the dialog opens: whether a plan is
 * a re-plan after a rejection, and whose sub-agent the run is.
 */
export function useApprovalOrigin(request: ApprovalRequest): ApprovalOrigin {
  const client = useAppStore((state) => state.client);
  const [origin, setOrigin] = useState<ApprovalOrigin>(NONE);
  const { id, runId } = request;
  // By value: the queue hands over a new request object at each refresh, and this reads the run once per request.
  const planKey = request.kind === 'plan' ? (stepIds(request.action)?.join('\n') ?? null) : null;
  useEffect(() => {
    let current = true;
    const load = async () => {
      const run = await client.commands['runs.get']({ runId });
      const parentRunId = run.run.parentRunId;
      const parent = parentRunId ? await client.commands['runs.get']({ runId: parentRunId }) : null;
      const subagent = parent ? { parentGoal: parent.run.goal, stepId: spawningStep(parent.events, runId) } : null;
      if (current) setOrigin({ replan: planChange(planKey === null ? null : planKey.split('\n'), id, run.events), subagent });
    };
    // The dialog is whole without this: a run that cannot be read leaves the request as it came.
    load().catch(() => undefined);
    return () => {
      current = false;
    };
  }, [client, id, runId, planKey]);
  return origin;
}
