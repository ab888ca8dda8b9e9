import { inAppTerms } from '../../../../shared/app-advice';
import { ApprovalHistory } from '../approvals/approval-history';
import { BudgetMeter } from '../budget/budget-meter';
import { GoalComposer } from '../composer/goal-composer';
import { BusView } from '../bus/bus-view';
import { DagView } from '../dag/dag-view';
import { useId, useMemo, useState } from 'react';
import { StepInspector } from '../inspector/step-inspector';
import type { RunEvent } from '../../../../shared/schemas/events';
import type { RunDetail, StepView } from '../../../../shared/schemas/run-detail';
import { ENDED_RUN_STATUSES } from '../../../../shared/schemas/run';
import { useAppStore } from '../../store/use-app-store';
import { GapTrend } from '../validation/gap-trend';
import { recoveryOf, recoveryOfStep, stepsWithReplaced, type RunRecovery } from '../validation/validation-model';
import { acceptedGaps, lastOutcome, statusLabel } from '../contract/contract-model';
import { DoneMeans } from '../contract/done-means';
import { RunList } from './run-list';
import { RunModel } from './run-model';

const NONE: readonly never[] = [];

const RUN_TABS = [
  { id: 'graph', label: 'Graph' },
  { id: 'bus', label: 'Bus' },
  { id: 'approvals', label: 'Approvals' },
] as const;
type RunTab = (typeof RUN_TABS)[number]['id'];

/** The selected run's graph, its bus or its approvals, one at a time. */
function RunTabs({ tab, onTab, panelId }: { tab: RunTab; onTab(tab: RunTab): void; panelId: string }) {
  return (
    <div role="tablist" aria-label="Run views" className="run-tabs">
      {RUN_TABS.map((entry) => (
        <button key={entry.id} type="button" role="tab" id={`${panelId}-${entry.id}`} aria-selected={tab === entry.id} aria-controls={panelId} onClick={() => onTab(entry.id)}>
          {entry.label}
        </button>
      ))}
    </div>
  );
}

interface PlanOfRun {
  steps: readonly StepView[];
  events: readonly RunEvent[];
  recovery: RunRecovery;
}

/** The selected step with the events and recovery of its run: the run's own, or a sub-agent's (`<childRunId>/<stepId>`). */
function inspectedStep(selectedStepId: string | null, own: PlanOfRun, children: Readonly<Record<string, RunDetail>>): PlanOfRun & { step: StepView | null } {
  const slash = selectedStepId?.indexOf('/') ?? -1;
  const child = selectedStepId && slash > 0 ? children[selectedStepId.slice(0, slash)] : undefined;
  if (!child || !selectedStepId) return { ...own, step: own.steps.find((candidate) => candidate.spec.id === selectedStepId) ?? null };
  const stepId = selectedStepId.slice(slash + 1);
  return { steps: child.steps, events: child.events, recovery: recoveryOf(child.events), step: child.steps.find((candidate) => candidate.spec.id === stepId) ?? null };
}

/** The unmet criteria the operator accepted when the run ended `completed_with_gaps`. */
function AcceptedGaps({ events }: { events: readonly RunEvent[] }) {
  const gaps = useMemo(() => acceptedGaps(events), [events]);
  const headingId = useId();
  return gaps.length > 0 ? (
    <section className="accepted-gaps" aria-labelledby={headingId}>
      <h3 id={headingId}>Accepted gaps</h3>
      <ul>
        {gaps.map((gap, index) => (
          <li key={index}>{gap}</li>
        ))}
      </ul>
    </section>
  ) : null;
}

export function RunsView() {
  const detail = useAppStore((state) => state.detail);
  const children = useAppStore((state) => state.children);
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
  const inspected = useMemo(() => inspectedStep(selectedStepId, { steps, events, recovery }, children), [selectedStepId, steps, events, recovery, children]);
  const [tab, setTab] = useState<RunTab>('graph');
  const panelId = useId();
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
              <span className={`status status-${detail.run.status}`}>{statusLabel(detail.run.status)}</span>
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
            <AcceptedGaps events={detail.events} />
            {detail.state.contract && <DoneMeans contract={detail.state.contract} outcomes={lastOutcome(detail.events)?.criteria ?? null} />}
            {detail.run.error && (
              <section className="run-error" aria-labelledby="run-error-heading">
                <h3 id="run-error-heading">Why the run ended</h3>
                <p>{inAppTerms(detail.run.error)}</p>
              </section>
            )}
            <RunModel events={detail.events} />
            <BudgetMeter events={detail.events} />
            <RunTabs tab={tab} onTab={setTab} panelId={panelId} />
            <div role="tabpanel" id={panelId} aria-labelledby={`${panelId}-${tab}`} className="run-tab-panel">
              {tab === 'bus' ? (
                <BusView events={detail.events} selectedStepId={selectedStepId} onSelectStep={selectStep} />
              ) : tab === 'approvals' ? (
                <ApprovalHistory events={detail.events} />
              ) : steps.length > 0 ? (
                <DagView steps={steps} events={detail.events} children={children} selectedStepId={selectedStepId} waitingStepId={waitingStepId} onSelectStep={selectStep} colorMode={theme} />
              ) : (
                <p className="empty">Planning…</p>
              )}
            </div>
          </>
        ) : (
          <p className="empty">Start a run, or open one from the history.</p>
        )}
      </section>
      <aside className="run-inspector">{detail && <StepInspector step={inspected.step} events={inspected.events} recovery={inspected.step ? recoveryOfStep(inspected.recovery, inspected.step.spec.id) : null} onSelectStep={selectStep} />}</aside>
    </div>
  );
}
