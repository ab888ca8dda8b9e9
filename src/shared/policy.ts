import type { ApprovalKind } from './schemas/approval';
import type { Policy } from './schemas/run';
import type { ToolApprovalOverride } from './schemas/settings';
import type { SideEffects } from './schemas/tool';

/*
 * The policies of the brief as rules, shared by the runtime (which asks) and the auditor (which
 * checks that what had to be asked was asked).
 */

/** Which checkpoints each policy asks at (the brief's table); tool calls are decided per tool below. */
const CHECKPOINTS: Record<Policy, ReadonlySet<ApprovalKind>> = {
  supervised: new Set(['plan', 'model_call', 'step_result', 'subagent_spawn', 'critical_decision', 'final_answer']),
  strict: new Set(['plan', 'subagent_spawn', 'critical_decision', 'final_answer']),
  balanced: new Set(['plan', 'critical_decision', 'final_answer']),
  permissive: new Set(['final_answer']),
};

const STRICTNESS: Record<Policy, number> = { permissive: 0, balanced: 1, strict: 2, supervised: 3 };

export function asksAt(policy: Policy, kind: ApprovalKind): boolean {
  if (kind === 'budget_raise' || kind === 'uncertain_repeat' || kind === 'resume_run' || kind === 'outcome') return true;
  return CHECKPOINTS[policy].has(kind);
}

/**
 * Whether a tool call is put to a person: supervised and strict ask for every call, balanced for
 * calls with side effects, permissive for irreversible ones. The operator may set a tool to always
 * or never ask; under permissive, "never" is what lowers the irreversible floor. A tool running
 * unconfined (the sandbox turned off) is asked for always.
 */
export function asksForTool(policy: Policy, tool: { sideEffects: SideEffects; unconfined?: boolean }, override: ToolApprovalOverride | undefined): boolean {
  if (override === 'always' || tool.unconfined) return true;
  if (override === 'never') return false;
  if (policy === 'supervised' || policy === 'strict') return true;
  if (policy === 'balanced') return tool.sideEffects !== 'none';
  return tool.sideEffects === 'irreversible';
}

/** Whether "allow all like this for this run" may cover a tool's later calls: never an irreversible one under strict or supervised, never one running unconfined. */
export function grantsForRun(policy: Policy, tool: { sideEffects: SideEffects; unconfined?: boolean }): boolean {
  if (tool.unconfined) return false;
  return !(tool.sideEffects === 'irreversible' && STRICTNESS[policy] >= STRICTNESS.strict);
}

export function stricter(a: Policy, b: Policy): Policy {
  return STRICTNESS[a] >= STRICTNESS[b] ? a : b;
}

