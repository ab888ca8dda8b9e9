import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { actionHash } from '../../../src/core/approval/approval-gate';
import { answerShownClusterApproval, ClusterApprovals, pendingClusterApprovals } from '../../../src/core/restate/cluster-approvals';
import { clusterSecret, RestateCluster } from '../../../src/core/restate/restate-cluster';
import { ArchonError } from '../../../src/shared/errors';
import type { ApprovalRequest } from '../../../src/shared/schemas/approval';
import { until, useRestate } from '../../support/restate';
import { useTempDirs } from '../../support/temp-dir';

// A Restate server and a worker on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });
const tempDir = useTempDirs();
const restate = useRestate();

function toolCallRequest(command: string): ApprovalRequest {
  const action = { tool: 'run_command', args: { command } };
  return {
    id: randomUUID(),
    runId: randomUUID(),
    stepId: 'mark',
    kind: 'tool_call',
    summary: `run_command ${command}`,
    action,
    actionHash: actionHash(action),
    explanation: { summary: 'append a mark', confidence: null, risk: { level: 'medium', factors: [] }, reversibility: 'irreversible', cost: { tokensUsed: 0, tokensLeft: null, estimatedUsd: 0 }, downstream: [], alternatives: [] },
    requestedAt: new Date().toISOString(),
    expiresAt: null,
  };
}

async function codeOf(answer: Promise<unknown>): Promise<string | null> {
  const error = await answer.then(() => null, (failure: unknown) => failure);
  return ArchonError.isInstance(error) ? `${error.code}: ${error.message}` : String(error);
}

describe("the app's answer to an approval waiting on the cluster", () => {
  it('is taken only for the action the operator was shown, while the request waits; the run gets it once', async () => {
    const server = await restate.server();
    const secretFile = restate.secretFile();
    const workspace = tempDir();
    await restate.worker(server, { id: 'w1', workspace, dataDir: tempDir(), secretFile });
    const cluster = new RestateCluster({ ingress: server.ingress, admin: server.admin });
    const secret = clusterSecret(secretFile, workspace);
    const request = toolCallRequest('echo mark >> ledger.txt');
    const decided = new ClusterApprovals(cluster, secret).decide(request, { signal: AbortSignal.timeout(100_000) });
    await until(async () => (await pendingClusterApprovals(cluster, AbortSignal.timeout(10_000))).length > 0, 'the request to wait on the cluster');

    // Shown another action (the request changed since the page read it): refused, and the request still waits.
    const shownOther = { approvalId: request.id, actionHash: toolCallRequest('rm -rf ~').actionHash };
    expect(await codeOf(answerShownClusterApproval(cluster, secret, shownOther, { verdict: 'approve' }, AbortSignal.timeout(10_000)))).toMatch(/^VALIDATION_FAILED: The decision names a different action than the one pending on the cluster/);
    expect((await pendingClusterApprovals(cluster, AbortSignal.timeout(10_000))).map((pending) => pending.key)).toEqual([request.id]);

    await answerShownClusterApproval(cluster, secret, { approvalId: request.id, actionHash: request.actionHash }, { verdict: 'reject', feedback: 'not today' }, AbortSignal.timeout(10_000));
    expect(await decided).toEqual({ verdict: 'reject', feedback: 'not today' });
    expect(await pendingClusterApprovals(cluster, AbortSignal.timeout(10_000))).toEqual([]);
    // Answered once: a second answer (another desk, a page that had not seen the first) is refused.
    expect(await codeOf(answerShownClusterApproval(cluster, secret, { approvalId: request.id, actionHash: request.actionHash }, { verdict: 'approve' }, AbortSignal.timeout(10_000)))).toMatch(/^NOT_FOUND: Approval .* no longer waits on the cluster/);
  });
});
