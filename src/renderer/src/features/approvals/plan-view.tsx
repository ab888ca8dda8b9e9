import { useMemo } from 'react';
import type { PlanStep } from '../../../../shared/schemas/plan';
import { layoutPlan, NODE_HEIGHT, NODE_WIDTH } from '../dag/dag-layout';

/** The mini graph is the run's DAG layout drawn at this fraction of its size. */
const SCALE = 0.45;

/** The plan's steps in order: id, description, what each waits for, and its tool. */
export function PlanSteps({ steps }: { steps: readonly PlanStep[] }) {
  return (
    <ol className="plan-steps" aria-label="Plan steps">
      {steps.map((step) => (
        <li key={step.id}>
          <strong>{step.id}</strong>: {step.description}
          <div className="meta">
            {step.dependencies.length > 0 ? `after ${step.dependencies.join(', ')}` : 'starts first'}
            {step.tool ? ` · tool ${step.tool}` : ''}
          </div>
        </li>
      ))}
    </ol>
  );
}

/** A small drawing of the plan's graph; the list above says the same in words. */
export function PlanGraph({ steps }: { steps: readonly PlanStep[] }) {
  const positions = useMemo(() => layoutPlan(steps).positions, [steps]);
  const width = Math.max(...[...positions.values()].map((at) => at.x + NODE_WIDTH), NODE_WIDTH);
  const height = Math.max(...[...positions.values()].map((at) => at.y + NODE_HEIGHT), NODE_HEIGHT);
  const at = (id: string) => positions.get(id) ?? { x: 0, y: 0 };
  return (
    <svg className="plan-graph" role="img" aria-label={`Plan graph: ${steps.length} step(s)`} viewBox={`0 0 ${width} ${height}`} width={width * SCALE} height={height * SCALE}>
      {steps.flatMap((step) =>
        step.dependencies
          .filter((dependency) => positions.has(dependency))
          .map((dependency) => (
            <line key={`${dependency}>${step.id}`} x1={at(dependency).x + NODE_WIDTH} y1={at(dependency).y + NODE_HEIGHT / 2} x2={at(step.id).x} y2={at(step.id).y + NODE_HEIGHT / 2} strokeWidth={3} />
          )),
      )}
      {steps.map((step) => (
        <g key={step.id} transform={`translate(${at(step.id).x} ${at(step.id).y})`}>
          <rect width={NODE_WIDTH} height={NODE_HEIGHT} rx={10} strokeWidth={3} />
          <text x={NODE_WIDTH / 2} y={NODE_HEIGHT / 2} textAnchor="middle" dominantBaseline="middle" fontSize={30}>
            {step.id.length > 14 ? `${step.id.slice(0, 13)}…` : step.id}
          </text>
        </g>
      ))}
    </svg>
  );
}

const ids = (list: readonly string[]) => (list.length === 0 ? 'none' : list.join(', '));

/** What a revised plan changes against the one before it, by step id. */
export function PlanChanges({ added, removed, why }: { added: readonly string[]; removed: readonly string[]; why: string }) {
  return (
    <section className="plan-changes" aria-label="What changed">
      <p>{why}</p>
      <dl className="explanation">
        <dt>New steps</dt>
        <dd>{ids(added)}</dd>
        <dt>Dropped steps</dt>
        <dd>{ids(removed)}</dd>
      </dl>
    </section>
  );
}
