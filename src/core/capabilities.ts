import type { RunOptions } from '../shared/schemas/run';
import { conflicts } from './conflicts/conflicts';
import { goalContract } from './outcome/goal-contract';
import { memory } from './memory/run-memory';
import { recovery } from './recovery/recovery';
import type { RunCapability } from './run/run-context';
import { subagents } from './subagents/subagent';
import { validation } from './validation/result-review';

/** Every capability a run may have, in the order their hooks are called. */
export const CAPABILITIES: readonly RunCapability[] = [goalContract, memory, validation, subagents, recovery, conflicts];

/** The capabilities of a run with these options: the app, `archon serve` and the CLI all take them from here. */
export function runCapabilities(options: Partial<Pick<RunOptions, 'memory' | 'verification'>>): readonly RunCapability[] {
  return CAPABILITIES.filter((capability) => !(capability === memory && options.memory === false) && !(capability === goalContract && options.verification === 'off'));
}
