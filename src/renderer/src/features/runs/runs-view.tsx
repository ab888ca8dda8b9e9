import { inAppTerms } from '../../../../shared/app-advice';
import { ApprovalHistory } from '../approvals/approval-history';
import { BudgetMeter } from '../budget/budget-meter';
import { GoalComposer } from '../composer/goal-composer';
import { BusView } from '../bus/bus-view';
import { DagView } from '../dag/dag-view';
import { useCallback, useId, useMemo, useRef, useState } from 'react';
import { StepInspector } from '../inspector/step-inspector';
import type { RunEvent } from '../../../../shared/schemas/events';
import type { RunDetail, StepView } from '../../../../shared/schemas/run-detail';
import { ENDED_RUN_STATUSES, type RunSummary } from '../../../../shared/schemas/run';
import { useAppStore } from '../../store/use-app-store';
import { GapTrend } from '../validation/gap-trend';
import { recoveryOf, recoveryOfStep, stepsWithReplaced, type RunRecovery } from '../validation/validation-model';
import { acceptedGaps, lastOutcome } from '../contract/contract-model';
import { DoneMeans } from '../contract/done-means';
import { FollowUpOf } from './follow-up-of';
import { RunControls, RunList } from './run-list';
import { RunModel } from './run-model';
import { useShownRun } from './use-live-run';
import { useInspectorOpen, type InspectorOpen } from './use-inspector-open';

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

/** Hides the step details so the graph gets their width, and shows them again. */
function InspectorToggle({ inspector, inspectorId }: { inspector: InspectorOpen; inspectorId: string }) {
  return (
    <button type="button" className="inspector-toggle" aria-expanded={inspector.open} aria-controls={inspectorId} onClick={inspector.toggle}>
      {inspector.open ? 'Hide step details' : 'Show step details'}
    </button>
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

/** Why the run ended, or, for a paused run, that it waits and what Resume does. */
function RunEnd({ status, error }: { status: RunSummary['status']; error: string }) {
  const paused = status === 'paused';
  return (
    <section className={paused ? 'run-paused-note' : 'run-error'} aria-labelledby="run-error-heading">
      <h3 id="run-error-heading">{paused ? 'Paused: Resume continues where it stopped' : 'Why the run ended'}</h3>
      <p>{inAppTerms(error)}</p>
    </section>
  );
}

/** The selected run's goal, its live status (the same as its card's), its gap trend, and Pause and Stop while it goes. */
function RunHeader({ run, gaps }: { run: RunSummary; gaps: readonly number[] }) {
  const shown = useShownRun(run);
  return (
    <header className="run-header">
      <h2>{run.goal}</h2>
      <div className="run-header-facts">
        <span className={`status status-${shown.status}${shown.control ? ' status-control' : ''}`}>{shown.statusText}</span>
        <span className="run-meta">Run {run.id.slice(0, 8)}</span>
        {run.followUpOf && <FollowUpOf runId={run.followUpOf} />}
        <GapTrend gaps={gaps} />
        {!ENDED_RUN_STATUSES.has(shown.status) && !shown.interrupted && <RunControls runId={run.id} goal={run.goal} shown={shown} named="header" />}
      </div>
    </header>
  );
}

export function RunsView() {
  const detail = useAppStore((state) => state.detail);
  const children = useAppStore((state) => state.children);
  const selectedStepId = useAppStore((state) => state.selectedStepId);
  const selectStep = useAppStore((state) => state.selectStep);
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
  const selectedRun = useRef<HTMLElement>(null);
  const waitingStepId = pendingStepId ?? steps.find((candidate) => candidate.status === 'awaiting_approval')?.spec.id ?? null;
  const inspector = useInspectorOpen(selectedStepId);
  const inspectorId = useId();
  const { reveal } = inspector;
  const revealStep = useCallback(
    (id: string | null) => {
      selectStep(id);
      reveal();
    },
    [selectStep, reveal],
  );
  return (
    <div className={`runs-layout${inspector.open ? '' : ' inspector-collapsed'}`}>
      <a
        href="#selected-run"
        className="skip-link"
        onClick={(event) => {
          event.preventDefault();
          selectedRun.current?.focus();
        }}
      >
        Skip to selected run
      </a>
      <aside className="runs-side" aria-labelledby="runs-heading">
        <h1 id="runs-heading">Runs</h1>
        <GoalComposer />
        <RunList />
      </aside>
      <section className={`run-main${detail?.run.status === 'paused' ? ' run-paused' : ''}`} aria-label="Selected run" id="selected-run" ref={selectedRun} tabIndex={-1}>
        {detail ? (
          <>
            <RunHeader run={detail.run} gaps={recovery.gapTrend} />
            {detail.run.answer && (
              <p className="answer" aria-label="Answer">
                {detail.run.answer}
              </p>
            )}
            <AcceptedGaps events={detail.events} />
            {detail.state.contract && <DoneMeans contract={detail.state.contract} outcomes={lastOutcome(detail.events)?.criteria ?? null} />}
            {detail.run.error && <RunEnd status={detail.run.status} error={detail.run.error} />}
            <RunModel events={detail.events} />
            <BudgetMeter run={detail.run} events={detail.events} />
            <div className="run-tabs-bar">
              <RunTabs tab={tab} onTab={setTab} panelId={panelId} />
              <InspectorToggle inspector={inspector} inspectorId={inspectorId} />
            </div>
            <div role="tabpanel" id={panelId} aria-labelledby={`${panelId}-${tab}`} className="run-tab-panel">
              {tab === 'bus' ? (
                <BusView events={detail.events} selectedStepId={selectedStepId} onSelectStep={revealStep} />
              ) : tab === 'approvals' ? (
                <ApprovalHistory events={detail.events} />
              ) : steps.length > 0 ? (
                <DagView steps={steps} events={detail.events} children={children} selectedStepId={selectedStepId} waitingStepId={waitingStepId} runPaused={detail.run.status === 'paused'} onSelectStep={revealStep} colorMode={theme} />
              ) : (
                <p className="empty">Planning…</p>
              )}
            </div>
          </>
        ) : (
          <p className="empty">Start a run, or open one from the history.</p>
        )}
      </section>
      <aside className="run-inspector" aria-label="Step details" id={inspectorId} hidden={!inspector.open}>
        {detail && <StepInspector step={inspected.step} events={inspected.events} recovery={inspected.step ? recoveryOfStep(inspected.recovery, inspected.step.spec.id) : null} runPaused={detail.run.status === 'paused'} onSelectStep={selectStep} />}
      </aside>
    </div>
  );
}
