import { useEffect, useState } from 'react';
import type { StepStatus } from '../../../shared/schemas/run';
import type { StepView } from '../../../shared/schemas/run-detail';
import { DagView } from '../features/dag/dag-view';
import { renderCounts } from '../features/dag/step-node';

/** A synthetic plan of `count` steps in layers of 10, for the render-count test and the pan/zoom benchmark. */
function syntheticSteps(count: number): StepView[] {
  return Array.from({ length: count }, (_, index) => ({
    spec: { id: `n${index}`, description: `synthetic step ${index}`, dependencies: index >= 10 ? [`n${index - 10}`] : [] },
    status: 'pending' as StepStatus,
    result: null,
    error: null,
  }));
}

declare global {
  interface Window {
    archonPerf?: { renderCounts: Map<string, number>; setStatus(id: string, status: StepStatus): void };
  }
}

/** `?perf-dag=500`: the DAG alone, without a runtime, with hooks for tests to change a status and read render counts. */
export function PerfHarness({ nodes }: { nodes: number }) {
  const [steps, setSteps] = useState(() => syntheticSteps(nodes));
  useEffect(() => {
    window.archonPerf = {
      renderCounts,
      setStatus: (id, status) => setSteps((current) => current.map((step) => (step.spec.id === id ? { ...step, status } : step))),
    };
  }, []);
  return (
    <div className="perf-harness">
      <DagView steps={steps} events={[]} selectedStepId={null} onSelectStep={() => undefined} />
    </div>
  );
}
