import type { PlanStep } from '../../shared/schemas/plan';
import type { ValidationCheck, Verdict } from '../../shared/schemas/validation';
import type { RunContext } from '../run/run-context';
import type { ChatMessage } from '../model/chat';
import { deterministicChecks, type Evidence } from './checks';
import { askCritic } from '../run/critic';
import { runEvidence } from '../contract/run-evidence';

/** The Agent-Validator's finding on one result (the payload of `validation.completed`). */
export interface StepValidation {
  verdict: Verdict;
  gap: number;
  /** How sure the validator is (see confidenceOf); null when it cannot be measured. */
  confidence: number | null;
  reasons: string[];
  checks: ValidationCheck[];
}

/** A tool's failure; an interrupted call's unknown outcome is uncertainty, not a failure. */
const FAILED_STATUS = /^(error|timeout): (?!Outcome unknown)/;
const OBSERVATION = /^Observation: /m;

/** The tool results the step saw, in order: tool messages (native) or Observation lines (text). */
export function evidenceOf(messages: readonly ChatMessage[]): Evidence[] {
  const evidence: Evidence[] = [];
  for (const message of messages) {
    if (message.role === 'tool') evidence.push({ text: message.content, failed: FAILED_STATUS.test(message.content) });
    else if (message.role === 'user' && OBSERVATION.test(message.content)) {
      for (const text of message.content.split(OBSERVATION).filter((part) => part.trim() !== '')) evidence.push({ text: text.trim(), failed: FAILED_STATUS.test(text) });
    }
  }
  return evidence;
}

/**
 * Validates a step's result: the deterministic checks first (a failing one is not put to the critic),
 * then, with `critic`, the critic's verdict. With checks alone the gap is the share of checks that
 * failed and the confidence is the share that held.
 */
export async function validateStep(context: RunContext, step: PlanStep, result: string, conversation: readonly ChatMessage[]): Promise<StepValidation> {
  const evidence = evidenceOf(conversation);
  const checks = deterministicChecks(step, result, evidence, runEvidence(context));
  const failed = checks.filter((item) => !item.passed);
  const share = failed.length / checks.length;
  if (failed.length > 0 || context.options.verification !== 'critic') {
    return { verdict: failed.length > 0 ? 'fail' : 'pass', gap: share, confidence: 1 - share, reasons: failed.map((item) => item.detail ?? item.name), checks };
  }
  const brief = conversation.find((message, index) => index > 0 && message.role === 'user');
  const answer = await askCritic(context, {
    task: brief?.content ?? `Step ${step.id}: ${step.description}`,
    criteria: step.expected_output ?? null,
    subject: result,
    evidence: evidence.map((item) => item.text),
    stepId: step.id,
  });
  if (!answer.readable) return { verdict: 'fail', gap: 1, confidence: null, reasons: [answer.reason], checks: [...checks, { name: 'critic', passed: false, detail: answer.reason }] };
  const { verdict, gap, reason, confidence } = answer.verdict;
  return { verdict, gap, confidence: confidence ?? 1 - gap, reasons: [reason], checks: [...checks, { name: 'critic', passed: verdict === 'pass', ...(verdict === 'fail' ? { detail: reason } : {}) }] };
}
