import { describe, expect, it } from 'vitest';
import { planReply, requestText, stepIdOf, type ScriptedReply } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';
import { useModelServers } from '../../support/model-servers';

const useRun = useEngine();
const modelServer = useModelServers();

const threeSteps = planReply([
  { id: 'a', description: 'one' },
  { id: 'b', description: 'two' },
  { id: 'c', description: 'three' },
]);

describe('a run with roles', () => {
  it("keeps a role's calls within its maxConcurrency", async () => {
    const harness = await useRun({ latencyMs: 150, reply: (request) => (request.purpose === 'plan' ? threeSteps : { content: 'done' }) });
    const result = await harness.run('three things', { roles: { executor: { description: '', tools: 'all', maxConcurrency: 1 } } });
    expect(result.status).toBe('completed');
    expect(harness.server.countByPurpose().step).toBe(3);
    expect(harness.server.stats.maxInFlight).toBe(1);
  });

  it("keeps a role's calls within its server's parallel slots, however wide the plan", async () => {
    const serverB = await modelServer({ latencyMs: 150, llamaCpp: { contextLength: 8192, slots: 1 }, reply: () => ({ content: 'done' }) });
    const harness = await useRun({ reply: (request) => (request.purpose === 'plan' ? threeSteps : { content: 'all done' }) });
    const result = await harness.run('three things', { roles: { executor: { description: '', tools: 'all', model: { url: serverB.url, name: 'scripted-model' } } } });
    expect(result.status).toBe('completed');
    expect(serverB.countByPurpose().step).toBe(3);
    expect(serverB.stats.maxInFlight).toBe(1);
    expect(harness.server.countByPurpose().step ?? 0).toBe(0);
  });

  it("charges each role's calls at its own model's price", async () => {
    const usage = { prompt_tokens: 1000, completion_tokens: 1000 };
    const serverB = await modelServer({ models: ['model-b'], reply: () => ({ content: 'done', usage }) });
    const plan = { ...planReply([{ id: 'a', description: 'one' }, { id: 'b', description: 'two' }]), usage } as ScriptedReply;
    const harness = await useRun({ reply: (request) => (request.purpose === 'plan' ? plan : { content: 'all done', usage }) }, { modelPrices: { 'model-b': { inputPerMillion: 1, outputPerMillion: 2 } } });
    const result = await harness.run('two things', { roles: { executor: { description: '', tools: 'all', model: { url: serverB.url, name: 'model-b' } } } });
    expect(result.status).toBe('completed');
    // Two step calls at $0.003 each on model-b; the plan, the final answer and the outcome check on the run's own (local, free) model.
    const last = harness.events.filter((event) => event.type === 'budget.updated').at(-1);
    expect(last).toMatchObject({ modelCalls: 5 });
    expect(last?.type === 'budget.updated' && last.tokens).toBeGreaterThan(8000);
    expect(last?.type === 'budget.updated' && last.costUsd).toBeCloseTo(0.006, 9);
  });

  it('resumes with the roles it started with', async () => {
    let stop: () => void = () => undefined;
    const serverB = await modelServer({
      reply: (request, index): ScriptedReply => {
        if (index === 0) {
          stop();
          return { hang: true };
        }
        return { content: `done ${stepIdOf(request) ?? ''}` };
      },
    });
    const harness = await useRun({ reply: (request) => (request.purpose === 'plan' ? planReply([{ id: 'a', description: 'one' }]) : { content: 'all done' }) });
    const controller = new AbortController();
    stop = () => controller.abort();
    const first = await harness.run('one thing', { roles: { executor: { description: '', tools: 'all', model: { url: serverB.url, name: 'scripted-model' } } } }, controller.signal);
    expect(first.status).toBe('stopped');
    const resumed = await harness.resume(first.runId);
    expect(resumed).toMatchObject({ status: 'completed', answer: 'all done' });
    expect(serverB.countByPurpose().step).toBe(2);
    expect(harness.server.countByPurpose().step ?? 0).toBe(0);
  });
  it("counts a sub-agent's spending at its role's own price against the parent's cost cap: the next sub-agent gets what is left, and both stop", async () => {
    const serverB = await modelServer({ models: ['model-b'], reply: (request) => ({ content: `found (${stepIdOf(request) ?? ''})`, usage: { prompt_tokens: 30_000, completion_tokens: 0 } }) });
    const plans: Record<string, ScriptedReply> = {
      'Report on France': planReply([
        { id: 'capital', kind: 'subagent', goal: 'Find the capital of France', role: 'researcher' },
        { id: 'river', kind: 'subagent', goal: 'Find the river of Paris', role: 'researcher', dependencies: ['capital'] },
      ]),
      'Find the capital of France': planReply([{ id: 'lookup', description: 'Look it up' }]),
      'Find the river of Paris': planReply([{ id: 'lookup', description: 'Look it up' }]),
    };
    const harness = await useRun(
      {
        reply: (request) => {
          const goal = [...requestText(request).matchAll(/^Goal: (.+)$/gm)].at(-1)?.[1] ?? '';
          return request.purpose === 'plan' ? (plans[goal] ?? planReply([])) : { content: `answer to ${goal}` };
        },
      },
      { modelPrices: { 'model-b': { inputPerMillion: 1, outputPerMillion: 1 } } },
    );
    // The run's own (local) model is free: only the researchers' calls, $0.03 each at model-b's price, count.
    const result = await harness.run('Report on France', { maxCostUsd: 0.05, roles: { researcher: { description: 'Finds facts', tools: 'all', model: { url: serverB.url, name: 'model-b' } } } });
    expect(result.status).toBe('budget_exhausted');
    const children = harness.runtime.store.runs.listRuns(10).filter((run) => run.parentRunId === result.runId);
    const river = children.find((run) => run.goal === 'Find the river of Paris');
    expect(children.find((run) => run.goal === 'Find the capital of France')?.status).toBe('completed');
    expect(river?.status).toBe('budget_exhausted');
    expect(harness.runtime.store.runs.getRun(river?.id as string)?.options.maxCostUsd).toBeCloseTo(0.02, 9);
    expect(serverB.chatRequests.map(stepIdOf)).toEqual(['lookup', 'lookup']);
  });

  it("runs a specialist sub-agent's steps on its role's server; its plan and answer on the planner's", async () => {
    const serverB = await modelServer({ reply: (request) => ({ content: `found by the researcher (${stepIdOf(request) ?? ''})` }) });
    const plans: Record<string, ScriptedReply> = {
      'Report on France': planReply([{ id: 'research', kind: 'subagent', goal: 'Find the capital of France', role: 'researcher' }]),
      'Find the capital of France': planReply([{ id: 'lookup', description: 'Look it up' }, { id: 'check', description: 'Check it', dependencies: ['lookup'] }]),
    };
    const harness = await useRun({
      reply: (request) => {
        const goal = [...requestText(request).matchAll(/^Goal: (.+)$/gm)].at(-1)?.[1] ?? '';
        if (request.purpose === 'plan') return plans[goal] ?? planReply([]);
        return { content: `answer to ${goal}` };
      },
    });
    const result = await harness.run('Report on France', { roles: { researcher: { description: 'Finds facts', tools: 'all', model: { url: serverB.url, name: 'scripted-model' } } } });
    expect(result).toMatchObject({ status: 'completed', answer: 'answer to Report on France' });
    // The child's two role-less steps ran as the researcher, on its server; both plans and both answers on the run's own.
    expect(serverB.countByPurpose().step).toBe(2);
    expect(harness.server.countByPurpose()).toMatchObject({ plan: 2, final: 2 });
    expect(harness.server.countByPurpose().step ?? 0).toBe(0);
    // The child talks to the parent's servers as they were probed before the run: no probe comes after a step.
    const purposes = serverB.requests.map((request) => request.purpose);
    expect(purposes.lastIndexOf('probe')).toBeLessThan(purposes.indexOf('step'));
  });
});
