import type { PlanStep } from '../../shared/schemas/plan';
import { answerElicitation } from '../approval/checkpoints';
import type { RunContext } from '../agent/run-context';
import type { Elicitation, ElicitationAnswer } from '../tools/tool-registry';
import { jsonSchemaValidators as validators } from './json-schema';

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A server's elicitation goes to the operator's `elicitation` checkpoint; the form's content must fit the schema the server requested. */
export async function askOperator(context: RunContext, step: PlanStep, request: Elicitation, signal: AbortSignal): Promise<ElicitationAnswer> {
  if (signal.aborted) return { action: 'cancel' };
  const validate = validators.getValidator<Record<string, unknown>>(request.requestedSchema);
  return answerElicitation(context, step.id, request, (edited) => {
    const checked = validate(edited);
    return checked.valid && isObject(checked.data) ? { ok: true, value: checked.data, action: { server: request.server, message: request.message, requestedSchema: request.requestedSchema, content: checked.data } } : { ok: false, reason: checked.errorMessage ?? 'the answer must be an object' };
  });
}
