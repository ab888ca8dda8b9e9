import { describe, expect, it } from 'vitest';
import { readToolCalls } from '../../../../src/core/model/dialects/read-tool-calls';
import { dialectFixtures } from '../../../fixtures/dialects';

const parsed = (calls: { name: string; arguments: string }[]) => calls.map((call) => ({ name: call.name, arguments: JSON.parse(call.arguments) as unknown }));

describe('every dialect fixture (real outputs from llama.cpp, Ollama, vLLM and LangChain tests)', () => {
  it('has at least 60 cases, each naming its source', () => {
    expect(dialectFixtures.length).toBeGreaterThanOrEqual(60);
    for (const fixture of dialectFixtures) expect(fixture.source).toMatch(/^(ggml-org\/llama\.cpp|ollama\/ollama|vllm-project\/vllm|langchain-ai\/langchain) \S+/);
  });

  it.each(dialectFixtures.map((fixture) => [`${fixture.dialect}: ${fixture.name} (${fixture.source})`, fixture] as const))('%s', (_label, fixture) => {
    const reading = readToolCalls(fixture.output, fixture.tools, { reasoning: fixture.reasoning });
    expect(reading?.dialect).toBe(fixture.dialect);
    expect(parsed(reading?.calls ?? [])).toEqual(fixture.calls);
  });
});
