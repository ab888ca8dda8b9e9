import { describe, expect, it, vi } from 'vitest';
import { withArrivalNotices } from '../../src/main/arrival-notices';
import type { CommandHandlers } from '../../src/shared/ipc/dispatch';
import type { ApprovalRequest } from '../../src/shared/schemas/approval';

const context = { signal: new AbortController().signal };
const request = (id: string) => ({ id, runId: `run-${id}-0000`, kind: 'tool_call', summary: `run_command: echo ${id}` }) as ApprovalRequest;

/** Handlers whose cluster approvals answer `answers` in turn (an Error is thrown), with what they notify. */
function wrapped(...answers: (ApprovalRequest[] | Promise<ApprovalRequest[]> | Error)[]) {
  const list = vi.fn(async () => {
    const answer = answers.shift();
    if (answer instanceof Error) throw answer;
    return (await answer) ?? [];
  });
  const notify = vi.fn();
  const other = vi.fn();
  const handlers = withArrivalNotices({ 'clusterApprovals.list': list, 'runs.list': other } as unknown as CommandHandlers, notify);
  return { handlers, list: () => handlers['clusterApprovals.list']({}, context), notify, other };
}

describe('notices of what arrives in the answers of a list', () => {
  it('notifies each approval that arrives on the cluster after the first answer, once, in its words', async () => {
    const { list, notify } = wrapped([request('a')], [request('a'), request('b')], [request('b')], [request('c'), request('b')]);
    expect(await list()).toEqual([request('a')]);
    expect(await list()).toEqual([request('a'), request('b')]);
    await list();
    await list();
    expect(notify.mock.calls).toEqual([
      [{ title: 'Archon: approval waiting (tool call)', body: 'Run run-b-00: run_command: echo b' }],
      [{ title: 'Archon: approval waiting (tool call)', body: 'Run run-c-00: run_command: echo c' }],
    ]);
  });

  it('a failed answer notifies nothing and still rejects; the next answer is judged against the last one heard', async () => {
    const { list, notify } = wrapped([request('a')], new Error('the cluster is out of reach'), [request('a'), request('b')]);
    await list();
    await expect(list()).rejects.toThrow('the cluster is out of reach');
    expect(notify).not.toHaveBeenCalled();
    await list();
    expect(notify).toHaveBeenCalledTimes(1);
  });

  it('an answer overtaken by a later call is not tracked, so what the later one saw is not announced again', async () => {
    let release: (answer: ApprovalRequest[]) => void = () => {};
    const slow = new Promise<ApprovalRequest[]>((done) => (release = done));
    const { list, notify } = wrapped([], slow, [request('a')], [request('a')]);
    await list();
    const stale = list();
    await list();
    // The older call's answer, without the request, comes last.
    release([]);
    await stale;
    await list();
    expect(notify).toHaveBeenCalledTimes(1);
  });

  it('leaves the other handlers as they are', async () => {
    const { handlers, other } = wrapped();
    expect(handlers['runs.list']).toBe(other);
  });
});
