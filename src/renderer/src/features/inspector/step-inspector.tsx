import type { RunEvent } from '../../../../shared/schemas/events';
import type { StepView } from '../../../../shared/schemas/run-detail';
import { StepVerdicts } from '../validation/step-verdicts';
import type { StepRecovery } from '../validation/validation-model';
import { RecalledMemories } from './recalled-memories';
import { StepTrace } from './step-trace';
import { stepStatusText } from '../dag/step-status';

interface StepInspectorProps {
  step: StepView | null;
  events: readonly RunEvent[];
  recovery: StepRecovery | null;
  /** The run is paused: a step it stopped says so. */
  runPaused: boolean;
  onSelectStep(id: string): void;
}

/** The selected step's trace: model turns, tool calls with arguments and results, approvals, timings; its verdicts and repairs; then what memory gave it. */
export function StepInspector({ step, events, recovery, runPaused, onSelectStep }: StepInspectorProps) {
  if (!step) return <p className="empty">Select a step in the graph to see its trace.</p>;
  return (
    <section className="inspector" aria-label={`Step ${step.spec.id}`}>
      <h2>Step {step.spec.id}</h2>
      <p>{step.spec.description}</p>
      <p className={`status status-${step.status}`}>{stepStatusText(step.status, runPaused)}</p>
      {recovery && <StepVerdicts recovery={recovery} onSelectStep={onSelectStep} />}
      <StepTrace stepId={step.spec.id} events={events} />
      <RecalledMemories stepId={step.spec.id} events={events} />
    </section>
  );
}
