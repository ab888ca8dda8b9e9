import { z } from 'zod';
import { ArchonError, describeZodError } from '../../shared/errors';
import { PlanSchema, type Plan } from '../../shared/schemas/plan';
import type { ChatMessage, ChatResponse, ModelMode, ToolSpec } from '../model/chat';
import type { DialectName } from '../model/dialects/dialect';
import { readToolCalls } from '../model/dialects/read-tool-calls';
import { splitReasoning } from '../model/dialects/reasoning';
import { extractFirstJsonObject, parseLenientJson } from '../model/lenient-json';
import type { ToolRegistry } from '../tools/tool-registry';
import { validatePlan } from './validate-plan';

export const SUBMIT_PLAN = 'submit_plan';
export const MAX_PLAN_REPAIRS = 2;

export interface PlannerDependencies {
  mode: ModelMode;
  tools: ToolRegistry;
  callModel(request: { messages: ChatMessage[]; tools?: ToolSpec[] }): Promise<ChatResponse>;
  /** Told when a text-mode plan came as a submit_plan call in the model's own dialect. */
  onDialect?(dialect: DialectName): void;
}

const submitPlanSpec: ToolSpec = {
  name: SUBMIT_PLAN,
  description: 'Submit the plan: the steps that reach the goal and the dependencies between them.',
  parameters: z.toJSONSchema(PlanSchema, { io: 'input' }) as Record<string, unknown>,
};

function plannerPrompt(mode: ModelMode, tools: ToolRegistry): string {
  const toolList = tools.specs().map((tool) => `- ${tool.name}: ${tool.description}`).join('\n') || '- (none)';
  return [
    "You plan how to reach the operator's goal as a graph of steps.",
    'Each step has an id, a self-contained description of what to do, the ids of the steps whose results it needs (dependencies), and optionally expected_output, risk (low|medium|high|critical), and tool plus args when a single tool call does the whole step.',
    'Steps that do not need each other have no dependencies between them, so they run in parallel. Keep the plan as small as the goal allows.',
    `Tools the steps may use:\n${toolList}`,
    mode === 'native'
      ? `Call ${SUBMIT_PLAN} exactly once with {"goal": …, "steps": [{"id", "description", "dependencies", …}]}.`
      : 'Reply with one JSON object and nothing else: {"goal": "…", "steps": [{"id": "…", "description": "…", "dependencies": []}]}.',
  ].join('\n\n');
}

type Candidate = { ok: true; value: unknown } | { ok: false; error: string };

/** A plan written as text: a submit_plan call in any dialect, else the first JSON object outside the reasoning. */
function textPlan(response: ChatResponse, onDialect: PlannerDependencies['onDialect']): string | null {
  const call = readToolCalls(response.content, [submitPlanSpec], { reasoning: response.reasoning });
  if (call) {
    onDialect?.(call.dialect);
    return call.calls[0]?.arguments ?? null;
  }
  return extractFirstJsonObject(splitReasoning(response.content).content);
}

function candidateFrom(response: ChatResponse, mode: ModelMode, onDialect?: PlannerDependencies['onDialect']): Candidate {
  const call = mode === 'native' ? response.toolCalls.find((toolCall) => toolCall.name === SUBMIT_PLAN) : undefined;
  const text = call ? call.arguments : textPlan(response, onDialect);
  if (text === null) {
    return { ok: false, error: mode === 'native' ? `No plan was submitted. Call ${SUBMIT_PLAN} with the plan.` : 'No JSON object was found in your reply. Reply with the plan as one JSON object.' };
  }
  const parsed = parseLenientJson(text);
  return parsed.ok ? parsed : { ok: false, error: `The plan is not valid JSON (${parsed.error}).` };
}

function feedback(response: ChatResponse, mode: ModelMode, errors: string): ChatMessage[] {
  const message = `The plan was refused: ${errors} Submit a corrected plan.`;
  const call = mode === 'native' ? response.toolCalls.find((toolCall) => toolCall.name === SUBMIT_PLAN) : undefined;
  if (call) {
    return [
      { role: 'assistant', content: response.content || null, toolCalls: [call] },
      { role: 'tool', toolCallId: call.id, content: message },
    ];
  }
  return [
    { role: 'assistant', content: response.content },
    { role: 'user', content: message },
  ];
}

/**
 * Goal → validated plan. The plan must parse, match the schema and be a valid DAG; otherwise the
 * errors go back to the model, at most MAX_PLAN_REPAIRS times. `feedback` carries an operator's
 * words from a rejected plan into the request.
 */
export async function planGoal(goal: string, dependencies: PlannerDependencies, operatorFeedback: string[] = []): Promise<Plan> {
  const messages: ChatMessage[] = [
    { role: 'system', content: plannerPrompt(dependencies.mode, dependencies.tools) },
    { role: 'user', content: `Goal: ${goal}` },
    ...operatorFeedback.map((text): ChatMessage => ({ role: 'user', content: `The operator rejected the previous plan and said: ${text}` })),
  ];
  let lastErrors = '';
  for (let attempt = 0; attempt <= MAX_PLAN_REPAIRS; attempt++) {
    const response = await dependencies.callModel({ messages, tools: dependencies.mode === 'native' ? [submitPlanSpec] : undefined });
    const candidate = candidateFrom(response, dependencies.mode, dependencies.onDialect);
    let errors: string[];
    if (!candidate.ok) errors = [candidate.error];
    else {
      const parsed = PlanSchema.safeParse({ ...(candidate.value as object), goal });
      errors = parsed.success ? validatePlan(parsed.data, dependencies.tools) : [`The plan does not match the schema: ${describeZodError(parsed.error)}.`];
      if (parsed.success && errors.length === 0) return parsed.data;
    }
    lastErrors = errors.join(' ');
    messages.push(...feedback(response, dependencies.mode, lastErrors));
  }
  throw new ArchonError('PLAN_INVALID', `The model did not produce a valid plan in ${MAX_PLAN_REPAIRS + 1} attempts. Last problems: ${lastErrors}`);
}
