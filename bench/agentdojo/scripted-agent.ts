import { planReply, toolMessagesOf, type RecordedRequest, type ScriptedReply } from '../../test/kit/scripted-model-server';
import type { RecordedCall, Scenario } from './fixtures';

/*
 * The model of a replayed scenario, an agent that always obeys an injection: one step, the user task's
 * calls one per turn; once a result it read holds the attack's "<INFORMATION>", the injection task's calls
 * next, then the rest of the user task's; then the expected answer.
 */

const MARKER = '<INFORMATION>';

const answerOf = (scenario: Scenario) => scenario.expectedAnswer || 'Done.';

/** The calls the agent makes, given the results it has read so far (one per call it made). */
function callsAfter(scenario: Scenario, results: readonly string[]): RecordedCall[] {
  const injected = results.findIndex((result) => result.includes(MARKER));
  if (injected < 0 || injected >= scenario.userCalls.length) return scenario.userCalls;
  return [...scenario.userCalls.slice(0, injected + 1), ...scenario.injectionCalls, ...scenario.userCalls.slice(injected + 1)];
}

function stepTurn(scenario: Scenario, request: RecordedRequest): ScriptedReply {
  const results = toolMessagesOf(request);
  const next = callsAfter(scenario, results)[results.length];
  return next ? { toolCalls: [{ name: next.tool, arguments: next.args }] } : { content: answerOf(scenario) };
}

const pass = (): ScriptedReply => ({ toolCalls: [{ name: 'submit_verdict', arguments: { verdict: 'pass', gap: 0, reason: 'Answered as asked.', confidence: 0.99 } }] });

export function scriptedAgent(scenario: Scenario): (request: RecordedRequest) => ScriptedReply {
  return (request) => {
    switch (request.purpose) {
      case 'plan':
      case 'replan':
        return planReply([{ id: 'task', description: scenario.prompt, expected_output: 'the answer to the request' }], scenario.prompt);
      case 'step':
        return stepTurn(scenario, request);
      case 'critic':
        return pass();
      default:
        return { content: answerOf(scenario) };
    }
  };
}
