import { z } from 'zod';

/** A run's budget caps by name, as a `budget_raise` request's action names them. */
export const CAP_NAMES = ['tokens', 'cost', 'day_tokens', 'day_cost', 'model_calls', 'tool_calls'] as const;
export type CapName = (typeof CAP_NAMES)[number];

/** What a `budget_raise` request proposes: the cap that was hit and the value approving sets it to. */
export const BudgetRaiseActionSchema = z.object({ cap: z.enum(CAP_NAMES), proposed: z.number().positive() });

const count = (value: number) => value.toLocaleString('en-US');

/** Dollars with cents: "$3.00". */
export const formatUsd = (value: number) => `$${value.toFixed(2)}`;

/** A cap's value in words an operator reads: "3,000 tokens", "$3.00", "200 model calls". */
export function describeCap(cap: CapName, value: number): string {
  if (cap === 'cost' || cap === 'day_cost') return formatUsd(value);
  if (cap === 'model_calls' || cap === 'tool_calls') return `${count(value)} ${cap.replace('_', ' ')}`;
  return `${count(value)} tokens`;
}
