import { formatUsd } from '../../../../shared/budget-cap';
import type { RunEvent } from '../../../../shared/schemas/events';
import type { RunSummary } from '../../../../shared/schemas/run';
import { useAppStore } from '../../store/use-app-store';
import { dayTotals, formatSeconds, shownListedRun } from '../runs/live-summary';
import { useLiveInputs } from '../runs/use-live-run';

function Meter({ label, value, max, format }: { label: string; value: number; max: number | null; format(value: number): string }) {
  return (
    <div className="meter">
      <span>{label}</span>
      {max !== null ? <meter min={0} max={max} low={max * 0.8} high={max * 0.95} value={value} aria-label={label} /> : null}
      <span>
        {format(value)}
        {max !== null ? ` / ${format(max)}` : ''}
      </span>
    </div>
  );
}

const usd = (value: number) => `$${value.toFixed(4)}`;

/**
 * Tokens, money and time of the run (with its sub-agents' runs, as its card says them and the caps count them) against
 * the caps in force (raised ones included), its calls, and what all of today's runs spent.
 */
export function BudgetMeter({ run, events }: { run: RunSummary; events: readonly RunEvent[] }) {
  const inputs = useLiveInputs();
  const caps = useAppStore((state) => state.settings);
  const shown = shownListedRun(inputs, run);
  const today = dayTotals(inputs, new Date(inputs.now).toISOString().slice(0, 10));
  const latest = events.findLast((event): event is Extract<RunEvent, { type: 'budget.updated' }> => event.type === 'budget.updated');
  const maxCostUsd = latest?.maxCostUsd ?? null;
  return (
    <section className="budget" aria-label="Budget">
      <Meter label={shown.withSubAgents ? 'Tokens, with sub-agents' : 'Tokens'} value={shown.tokens} max={latest?.maxTokens ?? null} format={(value) => value.toLocaleString('en-US')} />
      {shown.priceKnown ? (
        <Meter label="Cost" value={shown.costUsd} max={maxCostUsd} format={usd} />
      ) : (
        <div className="meter">
          <span>Cost</span>
          <span>price unknown{maxCostUsd !== null ? ` / ${formatUsd(maxCostUsd)}` : ''}</span>
        </div>
      )}
      <Meter label="Model calls" value={latest?.modelCalls ?? 0} max={null} format={String} />
      <Meter label="Tool calls" value={latest?.toolCalls ?? 0} max={null} format={String} />
      <Meter label="Time" value={shown.seconds} max={null} format={formatSeconds} />
      <Meter label="Today, tokens" value={today.tokens} max={caps?.dailyMaxTokens ?? null} format={(value) => value.toLocaleString('en-US')} />
      <Meter label="Today, cost" value={today.costUsd} max={caps?.dailyMaxCostUsd ?? null} format={usd} />
    </section>
  );
}
