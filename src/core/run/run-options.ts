import { ArchonError, describeZodError } from '../../shared/errors';
import { resolveModelUrl } from '../../shared/model-presets';
import type { ApprovalKind } from '../../shared/schemas/approval';
import { RunOptionsSchema, type ModelPrice, type RunOptions } from '../../shared/schemas/run';
import type { Settings, ToolApprovalOverride } from '../../shared/schemas/settings';

/** Model turns per step when nobody said otherwise. */
export const DEFAULT_MAX_ITERATIONS = 10;

/**
 * A new run's options: each field as the host was given it (a command's flags; for the app, the
 * start form over `archon serve`'s flags), else Settings, else the built-in default. A result that
 * is not valid is refused, naming the field.
 */
export function runOptionsFrom(settings: Settings, given: Partial<RunOptions> = {}): RunOptions {
  const parsed = RunOptionsSchema.safeParse({
    modelUrl: resolveModelUrl(settings.modelUrl),
    model: settings.model,
    policy: settings.policy,
    concurrency: settings.concurrency,
    maxTokens: null,
    maxCostUsd: null,
    workspace: process.cwd(),
    maxIterations: DEFAULT_MAX_ITERATIONS,
    maxPlanSteps: settings.maxPlanSteps,
    verification: settings.verification,
    repairBudget: settings.repairBudget,
    maxReplans: settings.maxReplans,
    embeddingModel: settings.embeddingModel,
    ...(Object.keys(settings.roles).length > 0 ? { roles: settings.roles } : {}),
    ...(settings.cluster ? { cluster: settings.cluster } : {}),
    ...Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)),
  });
  if (!parsed.success) throw new ArchonError('CONFIG_INVALID', `Invalid run settings: ${describeZodError(parsed.error)}. Correct the flag or the setting named.`);
  return parsed.data;
}

/** How long each kind of approval waits before it expires (Settings give seconds). */
export function approvalExpiryMs(settings: Pick<Settings, 'approvalExpirySeconds'>): Partial<Record<ApprovalKind, number>> {
  return Object.fromEntries(Object.entries(settings.approvalExpirySeconds).map(([kind, seconds]) => [kind, seconds * 1000]));
}

/** The day's caps: Settings', or a tighter token cap the host was given (a budget preset's). */
export function dayCaps(settings: Pick<Settings, 'dailyMaxTokens' | 'dailyMaxCostUsd'>, dayMaxTokens?: number | null): { dayMaxTokens: number | null; dayMaxCostUsd: number | null } {
  return { dayMaxTokens: dayMaxTokens ?? settings.dailyMaxTokens, dayMaxCostUsd: settings.dailyMaxCostUsd };
}

/** What a run takes from Settings beside its options, as the run engine takes it. */
export interface RunRules {
  toolApproval: Readonly<Record<string, ToolApprovalOverride>>;
  expiryMs: Partial<Record<ApprovalKind, number>>;
  caps: { dayMaxTokens: number | null; dayMaxCostUsd: number | null };
  maxPlanSteps: number;
  maxSubagents: number;
  modelPrices: Readonly<Record<string, ModelPrice>>;
}

export function runRulesFrom(settings: Settings, dayMaxTokens?: number | null): RunRules {
  return {
    toolApproval: settings.toolApproval,
    expiryMs: approvalExpiryMs(settings),
    caps: dayCaps(settings, dayMaxTokens),
    maxPlanSteps: settings.maxPlanSteps,
    maxSubagents: settings.maxSubagents,
    modelPrices: settings.modelPrices,
  };
}
