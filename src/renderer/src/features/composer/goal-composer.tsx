import { useEffect, useId, useRef, useState } from 'react';
import { endpointSummary } from '../../../../shared/endpoint-summary';
import { isBuiltinModelUrl, resolveModelUrl } from '../../../../shared/model-presets';
import { PolicySchema, type Policy } from '../../../../shared/schemas/run';
import { askNotificationPermission } from '../approvals/approval-notifications';
import { useAppStore } from '../../store/use-app-store';

/** "Continue" on a run may be pressed far down the run list: bring the composer into view and put the cursor in its goal. */
function useFollowUpFocus(runId: string | undefined) {
  const formRef = useRef<HTMLFormElement>(null);
  const goalRef = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    if (!runId) return;
    formRef.current?.scrollIntoView({ block: 'start' });
    goalRef.current?.focus({ preventScroll: true });
  }, [runId]);
  return { formRef, goalRef };
}

const optionalNumber = (text: string) => (text.trim() === '' ? undefined : Number(text));

/** The goal and how to run it. Run probes the endpoint first, shows what it found, and warns before starting. */
export function GoalComposer() {
  const defaults = useAppStore((state) => state.info?.runDefaults);
  const probe = useAppStore((state) => state.probe);
  const probing = useAppStore((state) => state.probing);
  const probeEndpoint = useAppStore((state) => state.probeEndpoint);
  const startRun = useAppStore((state) => state.startRun);
  const latched = useAppStore((state) => state.estop.latched);
  const followUp = useAppStore((state) => state.followUp);
  const setFollowUp = useAppStore((state) => state.setFollowUp);
  const [goal, setGoal] = useState('');
  const [policy, setPolicy] = useState<Policy | ''>('');
  const [modelUrl, setModelUrl] = useState('');
  const [model, setModel] = useState('');
  const [maxTokens, setMaxTokens] = useState('');
  const [maxCost, setMaxCost] = useState('');
  const [concurrency, setConcurrency] = useState('');
  const [workspace, setWorkspace] = useState('');
  const [starting, setStarting] = useState(false);
  const id = useId();
  const { formRef, goalRef } = useFollowUpFocus(followUp?.runId);
  // A preset's name (builtin, ollama, …) stands for its address, as on the command line.
  const url = resolveModelUrl(modelUrl.trim()) || defaults?.modelUrl || '';

  async function run() {
    askNotificationPermission();
    const found = await probeEndpoint(url, model || defaults?.model || undefined);
    if (!found) return;
    setStarting(true);
    const started = await startRun({
      goal,
      ...(policy ? { policy } : {}),
      ...(modelUrl.trim() ? { modelUrl: url } : {}),
      model: found.model,
      maxTokens: optionalNumber(maxTokens),
      maxCostUsd: optionalNumber(maxCost),
      concurrency: optionalNumber(concurrency),
      ...(workspace ? { workspace } : {}),
      ...(followUp ? { followUpOf: followUp.runId } : {}),
    }).finally(() => setStarting(false));
    // A run that did not start keeps its goal in the field, to be run again once what stopped it is fixed.
    if (!started) return;
    setGoal('');
    setFollowUp(null);
  }

  return (
    <form ref={formRef} className="composer" onSubmit={(event) => event.preventDefault()} aria-label="New run">
      {followUp && (
        <p className="follow-up" role="status">
          Continuing run {followUp.runId.slice(0, 8)}: {followUp.goal}{' '}
          <button type="button" onClick={() => setFollowUp(null)}>
            Start fresh
          </button>
        </p>
      )}
      <label htmlFor={`${id}-goal`}>Goal</label>
      <textarea ref={goalRef} id={`${id}-goal`} rows={3} value={goal} onChange={(event) => setGoal(event.target.value)} placeholder={followUp ? "What should the agents do next, building on that run?" : "What should the agents achieve?"} />
      <div className="composer-grid">
        <label htmlFor={`${id}-policy`}>Policy</label>
        <select id={`${id}-policy`} value={policy} onChange={(event) => setPolicy(event.target.value as Policy | '')}>
          <option value="">default ({defaults?.policy ?? 'balanced'})</option>
          {PolicySchema.options.map((option) => (
            <option key={option}>{option}</option>
          ))}
        </select>
        <label htmlFor={`${id}-url`}>Model server</label>
        <input id={`${id}-url`} value={modelUrl} placeholder={defaults && isBuiltinModelUrl(defaults.modelUrl) ? 'builtin' : defaults?.modelUrl} onChange={(event) => setModelUrl(event.target.value)} />
        <label htmlFor={`${id}-model`}>Model</label>
        <input id={`${id}-model`} value={model} placeholder={defaults?.model || 'first listed'} onChange={(event) => setModel(event.target.value)} />
        <label htmlFor={`${id}-tokens`}>Token cap</label>
        <input id={`${id}-tokens`} inputMode="numeric" value={maxTokens} placeholder="none" onChange={(event) => setMaxTokens(event.target.value)} />
        <label htmlFor={`${id}-cost`}>Cost cap (USD)</label>
        <input id={`${id}-cost`} inputMode="decimal" value={maxCost} placeholder="none" onChange={(event) => setMaxCost(event.target.value)} />
        <label htmlFor={`${id}-concurrency`}>Concurrency</label>
        <input id={`${id}-concurrency`} inputMode="numeric" value={concurrency} placeholder="server slots, else 4" onChange={(event) => setConcurrency(event.target.value)} />
        <label htmlFor={`${id}-workspace`}>Workspace folder</label>
        <input id={`${id}-workspace`} value={workspace} placeholder={defaults?.workspace} onChange={(event) => setWorkspace(event.target.value)} />
      </div>
      {probe && (
        <p className="probe" role="status">
          {probe.model} at {probe.baseUrl}: {endpointSummary(probe)}.
          {probe.reason && <> Why: {probe.reason}.</>}
          {!probe.toolCalling && <strong> This model cannot call tools natively; Archon will use the text protocol, which is less reliable.</strong>}
        </p>
      )}
      {/* Until the host's defaults arrive, an empty server field would mean no server at all. */}
      <button type="button" className="primary" disabled={goal.trim() === '' || probing || starting || latched || !defaults} onClick={() => void run()}>
        Run
      </button>
    </form>
  );
}
