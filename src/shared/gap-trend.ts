/** A re-plan must shrink the gap to the goal by at least this much to count as progress. */
export const MIN_PROGRESS = 0.05;

/** The Goal Gradient Solver's gap trend as a person reads it: 0.50 → 0.50 → 0.67. */
export function describeGapTrend(trend: readonly number[]): string {
  return trend.length === 0 ? 'not measured' : trend.map((gap) => gap.toFixed(2)).join(' → ');
}
