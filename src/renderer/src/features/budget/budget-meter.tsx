import { useShallow } from 'zustand/react/shallow';
import { formatUsd } from '../../../../shared/budget-cap';
import type { RunEvent } from '../../../../shared/schemas/events';
import { useAppStore } from '../../store/use-app-store';

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

/** Tokens, money, time and tool calls of the run against the caps in force (raised ones included), and what all of today's runs spent. */
export function BudgetMeter({ events }: { events: readonly RunEvent[] }) {
  const today = useAppStore(
    useShallow((state) => {
      const day = new Date().toISOString().slice(0, 10);
      return state.runs.filter((run) => run.createdAt.startsWith(day)).reduce((sum, run) => ({ tokens: sum.tokens + run.tokens, costUsd: sum.costUsd + run.costUsd }), { tokens: 0, costUsd: 0 });
    }),
  );
  const caps = useAppStore((state) => state.settings);
  const latest = events.findLast((event): event is Extract<RunEvent, { type: 'budget.updated' }> => event.type === 'budget.updated');
  const first = events[0]?.ts;
  const last = events.at(-1)?.ts;
  const seconds = first && last ? Math.round((Date.parse(last) - Date.parse(first)) / 1000) : 0;
  return (
    <section className="budget" aria-label="Budget">
      <Meter label="Tokens" value={latest?.tokens ?? 0} max={latest?.maxTokens ?? null} format={(value) => value.toLocaleString('en-US')} />
      {latest?.priceKnown === false ? (
        <div className="meter">
          <span>Cost</span>
          <span>price unknown{latest.maxCostUsd !== null ? ` / ${formatUsd(latest.maxCostUsd)}` : ''}</span>
        </div>
      ) : (
        <Meter label="Cost" value={latest?.costUsd ?? 0} max={latest?.maxCostUsd ?? null} format={(value) => `$${value.toFixed(4)}`} />
      )}
      <Meter label="Model calls" value={latest?.modelCalls ?? 0} max={null} format={String} />
      <Meter label="Tool calls" value={latest?.toolCalls ?? 0} max={null} format={String} />
      <Meter label="Time" value={seconds} max={null} format={(value) => `${value} s`} />
      <Meter label="Today, tokens" value={today.tokens} max={caps?.dailyMaxTokens ?? null} format={String} />
      <Meter label="Today, cost" value={today.costUsd} max={caps?.dailyMaxCostUsd ?? null} format={(value) => `$${value.toFixed(4)}`} />
    </section>
  );
}
