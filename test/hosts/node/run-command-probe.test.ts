import { afterEach, describe, expect, it } from 'vitest';
import { RunEventSchema, type RunEvent } from '../../../src/shared/schemas/events';
import { planReply, requestText, startModelServer, type ModelServerOptions, type RecordedRequest, type ScriptedModelServer, type ScriptedReply } from '../../kit/scripted-model-server';
import { spawnArchon } from '../../support/archon-process';
import { useTempDirs } from '../../support/temp-dir';

const tempDir = useTempDirs();
let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** "compute 6*7 with the calculator", in the text protocol. */
function textModeModel(request: RecordedRequest): ScriptedReply {
  if (request.purpose === 'plan') return { content: JSON.stringify({ goal: 'compute', steps: [{ id: 'calc', description: 'Compute 6*7 with the calculator', dependencies: [] }] }) };
  if (request.purpose === 'final') return { content: 'Final Answer: 42' };
  return requestText(request).includes('Observation: 42') ? { content: 'Final Answer: 42' } : { content: 'Thought: use the tool\nAction: {"tool": "calculator", "arguments": {"expression": "6*7"}}' };
}

/** The same in native tool calls. */
function nativeModel(request: RecordedRequest): ScriptedReply {
  if (request.purpose === 'plan') return planReply([{ id: 'calc', description: 'Compute 6*7 with the calculator' }]);
  if (request.purpose === 'final') return { content: '42' };
  return (request.body.messages ?? []).some((message) => message.role === 'tool') ? { content: '42' } : { toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] };
}

async function run(options: Omit<ModelServerOptions, 'reply'>, reply: (request: RecordedRequest) => ScriptedReply, json = false) {
  server = await startModelServer({ ...options, reply });
  const args = ['run', 'compute 6*7 with the calculator', '--model-url', server.url, '--data-dir', tempDir(), '--workspace', tempDir(), '--approve', 'auto', ...(json ? ['--json'] : [])];
  return spawnArchon(args, { OPENAI_API_KEY: '' }).done;
}

const runRequests = () => (server?.chatRequests ?? []).filter((request) => request.purpose !== 'probe');

describe('archon run: the probe classifies each server refusal', () => {
  it.each([
    ['ollama-no-tools', /why: text protocol: the model cannot call tools on this server \("registry\.ollama\.ai\/library\/scripted-model does not support tools"\)/],
    ['vllm-no-auto-tool-choice', /why: text protocol: vLLM was started without tool calling; restart it with --enable-auto-tool-choice --tool-call-parser/],
    ['llamacpp-no-jinja', /why: text protocol: llama\.cpp was started without --jinja \("tools param requires --jinja flag"\)/],
  ] as const)('%s: the text protocol, with the reason in the progress output', async (refuse, reason) => {
    const result = await run({ refuse }, textModeModel);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toBe('42\n');
    expect(result.stderr).toContain('Model scripted-model: text protocol;');
    expect(result.stderr).toMatch(reason);
    expect(runRequests().every((request) => request.body.tools === undefined)).toBe(true);
  });

  it('llama.cpp "Cannot use tools with stream": native tool calls, every request sent whole; the JSON events say why', async () => {
    const result = await run({ refuse: 'llamacpp-no-tools-stream' }, nativeModel, true);
    expect(result.status, result.stderr).toBe(0);
    const events: RunEvent[] = result.stdout.trim().split('\n').map((line) => RunEventSchema.parse(JSON.parse(line)));
    expect(events.find((event) => event.type === 'model.probed')).toMatchObject({ toolCalling: true, streaming: false, reason: expect.stringContaining('Cannot use tools with stream') });
    expect(events.find((event) => event.type === 'tool.completed')).toMatchObject({ tool: 'calculator', content: '42' });
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', answer: '42' });
    expect(runRequests().map((request) => request.body.stream)).toEqual(runRequests().map(() => false));
  });

  it('LM Studio "No models loaded": exit 2 with a message that says to load a model', async () => {
    const result = await run({ refuse: 'lmstudio-no-model' }, nativeModel);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/has no model loaded \("No models loaded\. Please load a model.*"\)\. Load one \(LM Studio: the Developer page, or `lms load <model>`\)/);
    expect(runRequests()).toHaveLength(0);
  });

  it('a model that fails to load once: probed again, then native streamed tool calls', async () => {
    const result = await run({ loadFailures: 1 }, nativeModel);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Model scripted-model: native tool calls, streamed; context unknown; parallel slots unknown\n/);
    expect((server?.requests ?? []).filter((request) => request.purpose === 'probe' && request.path === '/v1/chat/completions')).toHaveLength(2);
    expect(runRequests().every((request) => request.body.stream === true)).toBe(true);
  });
});
