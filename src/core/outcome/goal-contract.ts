import type { RunCapability, RunContext } from '../run/run-context';
import { contractOf, stateContract } from '../contract/contract-state';
import { checkOutcome } from './outcome-check';
import { contractBrief, perceiveGoal } from '../contract/perceiver';

/** The contract stated before the first plan (a resumed run keeps the one it stated), as the planner's brief has it. */
async function stateBeforePlan(context: RunContext): Promise<string | null> {
  let contract = contractOf(context);
  if (!contract) {
    contract = await perceiveGoal(context);
    stateContract(context, contract, 'archon');
  }
  return contractBrief(contract);
}

/** Done means done: the goal as a contract before planning, and the outcome checked against it before the answer is given. */
export const goalContract: RunCapability = {
  name: 'goal-contract',
  hooks: {
    beforePlan: stateBeforePlan,
    reviewFinalAnswer: checkOutcome,
  },
};
