import * as restate from '@restatedev/restate-sdk';
import { z } from 'zod';
import { ApprovalDecisionSchema, ApprovalRequestSchema, type ApprovalDecision, type ApprovalRequest } from '../../shared/schemas/approval';
import { ArchonError } from '../../shared/errors';
import type { ApprovalChannel } from '../approval/approval-channel';
import type { RestateCluster } from './restate-cluster';
import { APPROVAL_SERVICE } from './service-names';
import { signed, verified } from './signed';

/**
 * Approvals of runs a worker drives, answered from a desk: each request is a Restate workflow keyed
 * by the approval's id, whose run waits on a durable promise that `archon approve` resolves. It
 * outlives the worker: a run resumed elsewhere asks again under the same id and finds the answer.
 */

/** An answer: a person's decision at a desk, or the request withdrawn by its run (expired, stopped). */
const AnswerSchema = z.object({ decision: ApprovalDecisionSchema, withdrawn: z.boolean() });
type Answer = z.infer<typeof AnswerSchema>;

const REQUEST = 'request';
const ANSWERED = 'answered';
const WITHDRAW_TIMEOUT_MS = 5000;

/** A pending approval as the desk lists it. */
export interface PendingClusterApproval {
  key: string;
  request: ApprovalRequest;
}

const ASK = `${APPROVAL_SERVICE}/run`;
const ANSWER = `${APPROVAL_SERVICE}/answer`;

/** The workflow a worker serves: the request kept, its answer awaited, the answer given once. */
export function approvalWorkflow(secret: string) {
  return restate.workflow({
    name: APPROVAL_SERVICE,
    handlers: {
      run: async (ctx: restate.WorkflowContext, input: unknown): Promise<Answer> => {
        ctx.set(REQUEST, verified(secret, ASK, ctx.key, input, ApprovalRequestSchema, 'an approval request'));
        const answer = await ctx.promise<Answer>(ANSWERED);
        ctx.set(ANSWERED, true);
        return answer;
      },
      answer: async (ctx: restate.WorkflowSharedContext, input: unknown): Promise<boolean> => {
        const answer = verified(secret, ANSWER, ctx.key, input, AnswerSchema, 'an answer');
        if ((await ctx.get(REQUEST)) === null) throw new restate.TerminalError(`No approval ${ctx.key} waits on this cluster.`);
        if ((await ctx.promise<Answer>(ANSWERED).peek()) !== undefined) throw new restate.TerminalError(`Approval ${ctx.key} was answered already.`);
        await ctx.promise<Answer>(ANSWERED).resolve(answer);
        return true;
      },
    },
  });
}

/** The channel of a run whose approvals a desk answers through the cluster: it waits as long as the approval's expiry lets it. */
export class ClusterApprovals implements ApprovalChannel {
  readonly canRaiseBudgets = true;
  readonly channel = 'cluster' as const;

  constructor(
    private readonly cluster: RestateCluster,
    private readonly secret: string,
  ) {}

  async decide(request: ApprovalRequest, { signal }: { signal: AbortSignal }): Promise<ApprovalDecision> {
    const target = `${APPROVAL_SERVICE}/${encodeURIComponent(request.id)}/run`;
    try {
      const invocationId = await this.cluster.send(target, signed(this.secret, ASK, request.id, request), null, signal);
      return (await this.cluster.output(invocationId, AnswerSchema, signal)).decision;
    } catch (error) {
      if (signal.aborted) await this.withdraw(request.id);
      throw error;
    }
  }

  private withdraw(id: string): Promise<void> {
    return withdraw(this.cluster, this.secret, id);
  }
}

/** A request its run no longer waits for leaves the desk's list. */
async function withdraw(cluster: RestateCluster, secret: string, id: string): Promise<void> {
  const answer = { decision: { verdict: 'reject' as const, feedback: 'Withdrawn: the run no longer waits for this answer.' }, withdrawn: true };
  await answerOn(cluster, secret, id, answer, AbortSignal.timeout(WITHDRAW_TIMEOUT_MS)).catch(() => undefined);
}

/** A run resumed (its worker died while it waited): what it asked before is withdrawn, as it asks again under new ids. */
export async function withdrawRunApprovals(cluster: RestateCluster, secret: string, runId: string, signal: AbortSignal): Promise<void> {
  const asked = (await pendingClusterApprovals(cluster, signal)).filter((pending) => pending.request.runId === runId);
  await Promise.all(asked.map((pending) => withdraw(cluster, secret, pending.key)));
}

function answerOn(cluster: RestateCluster, secret: string, key: string, answer: Answer, signal: AbortSignal): Promise<boolean> {
  return cluster.call(`${APPROVAL_SERVICE}/${encodeURIComponent(key)}/answer`, signed(secret, ANSWER, key, answer), null, z.boolean(), signal);
}

/** `archon approve`: a person's decision at the desk, signed; refused by the cluster when the approval is unknown or answered. */
export function answerClusterApproval(cluster: RestateCluster, secret: string, key: string, decision: ApprovalDecision, signal: AbortSignal): Promise<boolean> {
  return answerOn(cluster, secret, key, { decision, withdrawn: false }, signal).catch((error: unknown) => {
    if (!ArchonError.isInstance(error) || error.code !== 'CLUSTER_REFUSED') throw error;
    if (/No approval .* waits|answered already/.test(error.message)) throw new ArchonError('NOT_FOUND', `${error.message} archon approvals lists those that wait.`);
    throw new ArchonError('CLUSTER_REFUSED', `${error.message} Check that --cluster-secret-file is the file the workers were started with.`);
  });
}

/** The app's answer: given only while the request still waits, and still names the action the operator was shown. */
export async function answerShownClusterApproval(cluster: RestateCluster, secret: string, shown: { approvalId: string; actionHash: string }, decision: ApprovalDecision, signal: AbortSignal): Promise<void> {
  const waiting = (await pendingClusterApprovals(cluster, signal)).find((pending) => pending.key === shown.approvalId);
  if (!waiting) throw new ArchonError('NOT_FOUND', `Approval ${shown.approvalId} no longer waits on the cluster: it was answered at another desk, or its run withdrew it (it expired, or the run stopped).`);
  if (waiting.request.actionHash !== shown.actionHash) {
    throw new ArchonError('VALIDATION_FAILED', 'The decision names a different action than the one pending on the cluster (hash mismatch); reload the request and decide again.');
  }
  await answerClusterApproval(cluster, secret, shown.approvalId, decision, signal);
}

/** The approvals that wait on the cluster for a person, oldest first. */
export async function pendingClusterApprovals(cluster: RestateCluster, signal: AbortSignal): Promise<PendingClusterApproval[]> {
  const rows = await cluster.query(`SELECT service_key, key, value_utf8 FROM state WHERE service_name = '${APPROVAL_SERVICE}'`, z.object({ service_key: z.string(), key: z.string(), value_utf8: z.string() }), signal);
  const answered = new Set(rows.filter((row) => row.key === ANSWERED).map((row) => row.service_key));
  return rows
    .flatMap((row) => {
      if (row.key !== REQUEST || answered.has(row.service_key)) return [];
      const request = ApprovalRequestSchema.safeParse(JSON.parse(row.value_utf8));
      return request.success ? [{ key: row.service_key, request: request.data }] : [];
    })
    .sort((a, b) => a.request.requestedAt.localeCompare(b.request.requestedAt));
}
