import { formatTrend } from './validation-model';

const WIDTH = 80;
const HEIGHT = 18;

/** The Goal Gradient Solver's gaps as a sparkline (drawn for the eye) and as text (read by everyone). */
export function GapTrend({ gaps }: { gaps: readonly number[] }) {
  if (gaps.length === 0) return null;
  const step = gaps.length > 1 ? WIDTH / (gaps.length - 1) : 0;
  const points = gaps.map((gap, index) => `${(index * step).toFixed(1)},${(gap * HEIGHT).toFixed(1)}`).join(' ');
  return (
    <p className="gap-trend" aria-label="Gap trend">
      <svg width={WIDTH} height={HEIGHT} viewBox={`-2 -2 ${WIDTH + 4} ${HEIGHT + 4}`} aria-hidden="true">
        <polyline points={points} fill="none" stroke="currentColor" strokeWidth="1.5" />
      </svg>{' '}
      Gap to the goal: {formatTrend(gaps)}
    </p>
  );
}
