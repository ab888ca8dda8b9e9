import { stricter } from '../../shared/policy';
import type { Risk } from '../../shared/schemas/plan';
import type { Policy } from '../../shared/schemas/run';

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
 * Adaptive autonomy: the band the measured signals call for, a signal that could not be measured
 * left out of the average. It only ever tightens the operator's policy, and only on evidence: at least
 * one measured signal must be in the strict range, so an unmeasured run keeps the policy the operator chose;
 * when that signal is the plan's size (complexity) alone, it tightens at most to strict, never to supervised.
 */
export function adaptPolicy(chosen: Policy, signals: AutonomySignals): { policy: Policy; reasons: string[] } {
  const entries = Object.entries(signals) as [keyof AutonomySignals, number | null][];
  const measured = entries.filter((entry): entry is [keyof AutonomySignals, number] => entry[1] !== null);
  const evidence = measured.filter(([, value]) => value >= 0.75).map(([name, value]) => `${name} ${value.toFixed(2)}`);
  if (evidence.length === 0) return { policy: chosen, reasons: [] };
  const average = measured.reduce((sum, [, value]) => sum + value, 0) / measured.length;
  const measuredBand: Policy = average >= 0.75 ? 'supervised' : average >= 0.55 ? 'strict' : average >= 0.3 ? 'balanced' : 'permissive';
  // A large plan asks for care, not for a request per model call: size alone tightens at most to strict.
  const sizeAlone = evidence.length === 1 && evidence[0]?.startsWith('complexity ') === true;
  const band = sizeAlone && measuredBand === 'supervised' ? 'strict' : measuredBand;
  if (stricter(band, chosen) === chosen) return { policy: chosen, reasons: [] };
  const missing = entries.filter(([, value]) => value === null).map(([name]) => name);
  return { policy: band, reasons: [`high: ${evidence.join(', ')}`, `average ${average.toFixed(2)} of ${measured.map(([name]) => name).join(', ')}`, ...(missing.length > 0 ? [`not measured (left out): ${missing.join(', ')}`] : [])] };
}
