import type { PlanStep } from '../../shared/schemas/plan';
import { answerElicitation } from '../approval/checkpoints';
import type { RunContext } from '../run/run-context';
import type { ToolResult } from '../../shared/schemas/tool';
import type { Elicitation, ElicitationAnswer } from '../tools/tool-registry';
import { jsonSchemaValidators as validators } from './json-schema';

/** Elicitations of one call put to the operator at most; past it a server could keep the operator answering forever. */
export const MAX_ELICITATIONS_PER_CALL = 5;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A server's elicitation goes to the operator's `elicitation` checkpoint; the form's content must fit the schema the server requested. */
export async function askOperator(context: RunContext, step: PlanStep, request: Elicitation, signal: AbortSignal): Promise<ElicitationAnswer> {
  if (signal.aborted) return { action: 'cancel' };
  const validate = validators.getValidator<Record<string, unknown>>(request.requestedSchema);
  return answerElicitation(context, step.id, request, (edited) => {
    const checked = validate(edited);
    return checked.valid && isObject(checked.data) ? { ok: true, value: checked.data, action: { server: request.server, message: request.message, requestedSchema: request.requestedSchema } } : { ok: false, reason: checked.errorMessage ?? 'the answer must be an object' };
  });
}

/**
 * The elicitations of one tool call: the first MAX_ELICITATIONS_PER_CALL go to the operator, the
 * rest are declined without asking, and the call's result says so (`noted`).
 */
export function callElicitations(context: RunContext, step: PlanStep): { elicit: (request: Elicitation, signal: AbortSignal) => Promise<ElicitationAnswer>; noted: (result: ToolResult) => ToolResult } {
  let asked = 0;
  let declined = 0;
  let server = '';
  return {
    elicit: (request, signal) => {
      if (asked >= MAX_ELICITATIONS_PER_CALL) {
        declined += 1;
        server = request.server;
        return Promise.resolve({ action: 'decline' });
      }
      asked += 1;
      return askOperator(context, step, request, signal);
    },
    noted: (result) => {
      if (declined === 0) return result;
      const note = `MCP server "${server}" asked for input ${asked + declined} times in this call; Archon put the first ${MAX_ELICITATIONS_PER_CALL} to the operator and declined the other ${declined} without asking.`;
      return { ...result, content: `${result.content}\n${note}` };
    },
  };
}
