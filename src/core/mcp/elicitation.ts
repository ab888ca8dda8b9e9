import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { PlanStep } from '../../shared/schemas/plan';
import { explain } from '../approval/approval-gate';
import { decide } from '../approval/edit-loop';
import type { RunContext } from '../agent/run-context';
import type { Elicitation, ElicitationAnswer } from '../tools/tool-registry';

const validators = new AjvJsonSchemaValidator();

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * A server's elicitation/create as an approval of kind `elicitation`: `edit` with the form's content
 * (checked against the requested schema, asked again when it does not fit) accepts; anything else
 * declines (so `--approve auto` and `deny` decline).
 */
export async function askOperator(context: RunContext, step: PlanStep, request: Elicitation, signal: AbortSignal): Promise<ElicitationAnswer> {
  if (signal.aborted) return { action: 'cancel' };
  const validate = validators.getValidator<Record<string, unknown>>(request.requestedSchema);
  const verdict = await decide(
    context,
    {
      kind: 'elicitation',
      stepId: step.id,
      summary: `MCP server "${request.server}" asks: ${request.message}`,
      action: { server: request.server, message: request.message, requestedSchema: request.requestedSchema },
      explanation: explain(context, {
        summary: `MCP server "${request.server}" asks the operator for information while step ${step.id} calls it. Fill in the form to answer, or reject to decline.`,
        stepId: step.id,
        risk: 'medium',
        factors: ['what you enter is sent to the server'],
        reversibility: 'not_applicable',
      }),
    },
    (edited) => {
      const checked = validate(edited);
      return checked.valid && isObject(checked.data) ? { ok: true, value: checked.data, action: { server: request.server, message: request.message, requestedSchema: request.requestedSchema, content: checked.data } } : { ok: false, reason: checked.errorMessage ?? 'the answer must be an object' };
    },
  );
  return verdict.verdict === 'edit' ? { action: 'accept', content: verdict.value } : { action: 'decline' };
}
