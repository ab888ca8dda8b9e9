import type { ApprovalKind } from '../../shared/schemas/approval';
import type { Risk } from '../../shared/schemas/plan';
import type { Policy } from '../../shared/schemas/run';
import type { ToolApprovalOverride } from '../../shared/schemas/settings';
import type { ToolDefinition } from '../tools/tool-registry';

/** Which checkpoints each policy asks at (the brief's table); tool calls are decided per tool below. */
const CHECKPOINTS: Record<Policy, ReadonlySet<ApprovalKind>> = {
  supervised: new Set(['plan', 'model_call', 'step_result', 'subagent_spawn', 'critical_decision', 'final_answer']),
  strict: new Set(['plan', 'subagent_spawn', 'critical_decision', 'final_answer']),
  balanced: new Set(['plan', 'critical_decision', 'final_answer']),
  permissive: new Set(['final_answer']),
};

const STRICTNESS: Record<Policy, number> = { permissive: 0, balanced: 1, strict: 2, supervised: 3 };

export function asksAt(policy: Policy, kind: ApprovalKind): boolean {
  if (kind === 'budget_raise' || kind === 'resume_side_effect') return true;
  return CHECKPOINTS[policy].has(kind);
}

/**
 * Whether a tool call is put to a person: supervised and strict ask for every call, balanced for
 * calls with side effects, permissive for irreversible ones. The operator may set a tool to always
 * or never ask; under permissive, "never" is what lowers the irreversible floor.
 */
export function asksForTool(policy: Policy, tool: ToolDefinition, override: ToolApprovalOverride | undefined): boolean {
  if (override === 'always') return true;
  if (override === 'never') return false;
  if (policy === 'supervised' || policy === 'strict') return true;
  if (policy === 'balanced') return tool.sideEffects !== 'none';
  return tool.sideEffects === 'irreversible';
}

export function stricter(a: Policy, b: Policy): Policy {
  return STRICTNESS[a] >= STRICTNESS[b] ? a : b;
}

/** The signals of seed 000, each from 0 (permissive) to 1 (strict); null when it could not be measured. */
export interface AutonomySignals {
  complexity: number | null;
  risk: number | null;
  trust: number | null;
  uncertainty: number | null;
  knowledge: number | null;
}

const RISK_SCORE: Record<Risk, number> = { low: 0, medium: 0.4, high: 0.75, critical: 1 };

export function riskScore(risks: readonly (Risk | undefined)[]): number | null {
  const known = risks.filter((risk): risk is Risk => risk !== undefined);
  return known.length === 0 ? null : Math.max(...known.map((risk) => RISK_SCORE[risk]));
}

/**
 * Adaptive autonomy: the band the signals call for, a missing signal counting as strict. It only
 * ever tightens the operator's policy, and only on evidence: at least one measured signal must be in
 * the strict range, so an unmeasured run keeps the policy the operator chose.
 */
export function adaptPolicy(chosen: Policy, signals: AutonomySignals): { policy: Policy; reasons: string[] } {
  const entries = Object.entries(signals) as [keyof AutonomySignals, number | null][];
  const average = entries.reduce((sum, [, value]) => sum + (value ?? 1), 0) / entries.length;
  const band: Policy = average >= 0.75 ? 'supervised' : average >= 0.55 ? 'strict' : average >= 0.3 ? 'balanced' : 'permissive';
  const evidence = entries.filter(([, value]) => value !== null && value >= 0.75).map(([name, value]) => `${name} ${(value as number).toFixed(2)}`);
  if (evidence.length === 0 || stricter(band, chosen) === chosen) return { policy: chosen, reasons: [] };
  const missing = entries.filter(([, value]) => value === null).map(([name]) => name);
  return { policy: band, reasons: [`high: ${evidence.join(', ')}`, ...(missing.length > 0 ? [`not measured (counted as strict): ${missing.join(', ')}`] : [])] };
}
