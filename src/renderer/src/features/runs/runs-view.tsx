import { inAppTerms } from '../../../../shared/app-advice';
import { BudgetMeter } from '../budget/budget-meter';
import { GoalComposer } from '../composer/goal-composer';
import { DagView } from '../dag/dag-view';
import { useMemo } from 'react';
import { StepInspector } from '../inspector/step-inspector';
import type { RunEvent } from '../../../../shared/schemas/events';
import type { StepView } from '../../../../shared/schemas/run-detail';
import { ENDED_RUN_STATUSES } from '../../../../shared/schemas/run';
import { useAppStore } from '../../store/use-app-store';
import { GapTrend } from '../validation/gap-trend';
import { recoveryOf, recoveryOfStep, stepsWithReplaced } from '../validation/validation-model';
import { RunList } from './run-list';
import { RunModel } from './run-model';

const NONE: readonly never[] = [];

export function RunsView() {
  const detail = useAppStore((state) => state.detail);
  const selectedStepId = useAppStore((state) => state.selectedStepId);
  const selectStep = useAppStore((state) => state.selectStep);
  const stopRun = useAppStore((state) => state.stopRun);
  const pauseRun = useAppStore((state) => state.pauseRun);
  const theme = useAppStore((state) => state.settings?.theme ?? 'system');
  const runId = detail?.run.id;
  const pendingStepId = useAppStore((state) => state.pending.find((request) => request.runId === runId && request.stepId !== null)?.stepId ?? null);
  const events: readonly RunEvent[] = detail?.events ?? NONE;
  const planned: readonly StepView[] = detail?.steps ?? NONE;
  const recovery = useMemo(() => recoveryOf(events), [events]);
  const steps = useMemo(() => stepsWithReplaced(planned, events, recovery), [planned, events, recovery]);
  const step = steps.find((candidate) => candidate.spec.id === selectedStepId) ?? null;
  const waitingStepId = pendingStepId ?? steps.find((candidate) => candidate.status === 'awaiting_approval')?.spec.id ?? null;
  return (
    <div className="runs-layout">
      <aside className="runs-side">
        <h1 id="runs-heading">Runs</h1>
        <GoalComposer />
        <RunList />
      </aside>
      <section className="run-main" aria-label="Selected run">
        {detail ? (
          <>
            <header className="run-header">
              <h2>{detail.run.goal}</h2>
              <span className={`status status-${detail.run.status}`}>{detail.run.status.replace('_', ' ')}</span>
              <GapTrend gaps={recovery.gapTrend} />
              {!ENDED_RUN_STATUSES.has(detail.run.status) && (
                <>
                  <button type="button" onClick={() => void pauseRun(detail.run.id)}>
                    Pause run
                  </button>
                  <button type="button" onClick={() => void stopRun(detail.run.id)}>
                    Stop run
                  </button>
                </>
              )}
            </header>
            {detail.run.answer && (
              <p className="answer" aria-label="Answer">
                {detail.run.answer}
              </p>
            )}
            {detail.run.error && (
              <section className="run-error" aria-labelledby="run-error-heading">
                <h3 id="run-error-heading">Why the run ended</h3>
                <p>{inAppTerms(detail.run.error)}</p>
              </section>
            )}
            <RunModel events={detail.events} />
            <BudgetMeter events={detail.events} />
            {steps.length > 0 ? <DagView steps={steps} events={detail.events} selectedStepId={selectedStepId} waitingStepId={waitingStepId} onSelectStep={selectStep} colorMode={theme} /> : <p className="empty">Planning…</p>}
          </>
        ) : (
          <p className="empty">Start a run, or open one from the history.</p>
        )}
      </section>
      <aside className="run-inspector">{detail && <StepInspector step={step} events={detail.events} recovery={step ? recoveryOfStep(recovery, step.spec.id) : null} onSelectStep={selectStep} />}</aside>
    </div>
  );
}
