import { useEffect, useId, useRef, useState } from 'react';
import { planGraphErrors } from '../../../../shared/plan-graph';
import { EscalationChoiceSchema, PlanRevisionActionSchema, type ApprovalRequest, type ExplanationPacket } from '../../../../shared/schemas/approval';
import { PlanStepSchema, type PlanStep } from '../../../../shared/schemas/plan';
import { BUILTIN_TOOL_NAMES, isBuiltinTool, TOOL_CATALOGUE } from '../../../../shared/tools/catalogue';
import { describeZodError } from '../../../../shared/errors';
import { GoalContractSchema, type Criterion, type GoalContract } from '../../../../shared/schemas/goal-contract';
import { BudgetRaiseActionSchema, describeCap } from '../../../../shared/budget-cap';
import { useAppStore } from '../../store/use-app-store';
import { ConfirmOrCancel } from './confirm-or-cancel';
import { ElicitationForm } from './elicitation-card';
import { EscalationPanel } from './escalation-panel';
import { CallPreview } from './call-preview';
import { mcpCallOf, McpCallDetails } from './mcp-call';
import { InjectionWarning, possibleInjectionOf } from './possible-injection';
import { PlanChanges, PlanGraph, PlanSteps } from './plan-view';
import { useApprovalOrigin, type PlanChange, type SubagentOrigin } from './approval-origin';
import { approvalTitle } from './approval-title';
import { useFocusReturn } from '../../focus-return';
import { StepTraceDisclosure } from './step-trace-disclosure';
import { OutcomeActionSchema } from '../../../../shared/schemas/goal-contract';
import { criteriaChanged, outcomeApproveHint } from '../contract/contract-model';
import { CriteriaEditor } from '../contract/criteria-editor';
import { CriteriaList } from '../contract/done-means';
import { OutcomePanel } from '../contract/outcome-panel';
import { useRunContract } from '../contract/use-run-contract';

function useCountdown(expiresAt: string | null): string {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  if (!expiresAt) return 'no expiry';
  const left = Math.max(0, Math.round((Date.parse(expiresAt) - now) / 1000));
  return `${Math.floor(left / 60)}:${String(left % 60).padStart(2, '0')}`;
}

type Mode = 'view' | 'reject' | 'edit' | 'lock';

/** "Never use tool X" means something only where a tool is about to be used. */
const LOCKABLE: ReadonlySet<ApprovalRequest['kind']> = new Set(['tool_call', 'uncertain_repeat']);

interface EditorProps {
  request: ApprovalRequest;
  onDone(edited: unknown): void;
  onCancel(): void;
}

type PlanRow = PlanStep & { deps: string; key: number };

/** A step the operator adds: an id no other step has, to be described before the plan is valid. */
function newRow(rows: readonly PlanRow[], key: number): PlanRow {
  const ids = new Set(rows.map((row) => row.id));
  let number = rows.length + 1;
  while (ids.has(`step-${number}`)) number++;
  return { id: `step-${number}`, description: '', dependencies: [], deps: '', key };
}

/** The contract as edited, or the schema's complaint about it. */
function checkedContract(contract: GoalContract | null, criteria: Criterion[]): { contract: GoalContract | null; errors: string[] } {
  if (!contract) return { contract: null, errors: [] };
  const parsed = GoalContractSchema.safeParse({ ...contract, criteria });
  return parsed.success ? { contract: parsed.data, errors: [] } : { contract: null, errors: [`Criteria: ${describeZodError(parsed.error)}`] };
}

/**
 * Plan steps as editable rows that can be added, deleted and reordered; re-validated as a DAG as you type.
 * With the run's contract, its criteria are edited here too and sent with the steps when they changed.
 */
function PlanEditor({ request, contract, onDone, onCancel }: EditorProps & { contract: GoalContract | null }) {
  const initial = (request.action as { steps: PlanStep[] }).steps;
  const [criteria, setCriteria] = useState<Criterion[]>(() => contract?.criteria ?? []);
  const edited = checkedContract(contract, criteria);
  const [rows, setRows] = useState<PlanRow[]>(() => initial.map((step, key) => ({ ...step, deps: step.dependencies.join(', '), key })));
  const [nextKey, setNextKey] = useState(initial.length);
  const steps = rows.map(({ deps, key: _key, ...step }) => ({ ...step, dependencies: deps.split(',').map((dep) => dep.trim()).filter(Boolean) }));
  const schemaErrors = steps.flatMap((step) => {
    const parsed = PlanStepSchema.safeParse(step);
    return parsed.success ? [] : [`${step.id || '(no id)'}: ${describeZodError(parsed.error)}`];
  });
  const errors = [...schemaErrors, ...planGraphErrors(steps), ...edited.errors];
  const update = (index: number, field: 'id' | 'description' | 'deps', value: string) => setRows((current) => current.map((row, at) => (at === index ? { ...row, [field]: value } : row)));
  const move = (index: number, by: -1 | 1) =>
    setRows((current) => {
      const next = [...current];
      [next[index], next[index + by]] = [next[index + by] as PlanRow, next[index] as PlanRow];
      return next;
    });
  const add = () => {
    setRows((current) => [...current, newRow(current, nextKey)]);
    setNextKey((key) => key + 1);
  };
  return (
    <div className="editor">
      {contract && <CriteriaEditor criteria={criteria} onChange={setCriteria} />}
      <table className="plan-editor">
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Description</th>
            <th scope="col">Depends on</th>
            <th scope="col">Order</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row, index) => (
            <tr key={row.key}>
              <td>
                <input aria-label={`Step ${index + 1} id`} value={row.id} onChange={(event) => update(index, 'id', event.target.value)} />
              </td>
              <td>
                <input aria-label={`Step ${index + 1} description`} value={row.description} onChange={(event) => update(index, 'description', event.target.value)} />
              </td>
              <td>
                <input aria-label={`Step ${index + 1} dependencies`} value={row.deps} onChange={(event) => update(index, 'deps', event.target.value)} />
              </td>
              <td className="row-actions">
                <button type="button" aria-label={`Move step ${row.id} up`} disabled={index === 0} onClick={() => move(index, -1)}>
                  ↑
                </button>
                <button type="button" aria-label={`Move step ${row.id} down`} disabled={index === rows.length - 1} onClick={() => move(index, 1)}>
                  ↓
                </button>
                <button type="button" aria-label={`Delete step ${row.id}`} onClick={() => setRows((current) => current.filter((_, at) => at !== index))}>
                  ✕
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div>
        <button type="button" onClick={add}>
          Add step
        </button>
      </div>
      <p role="status" className={errors.length > 0 ? 'invalid' : 'valid'}>
        {errors.length > 0 ? errors.join(' ') : 'The plan is a valid graph.'}
      </p>
      <ConfirmOrCancel label="Approve edited plan" disabled={errors.length > 0} onConfirm={() => onDone(edited.contract && criteriaChanged(contract?.criteria ?? [], criteria) ? { steps, contract: edited.contract } : { steps })} onCancel={onCancel} />
    </div>
  );
}

/** A tool call's arguments as JSON, checked against the tool's schema as you type. */
function ArgumentsEditor({ request, onDone, onCancel }: EditorProps) {
  const action = request.action as { tool: string; args: unknown };
  const [text, setText] = useState(() => JSON.stringify(action.args, null, 2));
  const id = useId();
  let problem: string | null = null;
  let value: unknown;
  try {
    value = JSON.parse(text);
    if (isBuiltinTool(action.tool)) {
      const parsed = TOOL_CATALOGUE[action.tool].input.safeParse(value);
      if (!parsed.success) problem = describeZodError(parsed.error);
    }
  } catch (error) {
    problem = `Not valid JSON: ${(error as Error).message}`;
  }
  return (
    <div className="editor">
      <label htmlFor={id}>Arguments (JSON)</label>
      <textarea id={id} rows={8} value={text} onChange={(event) => setText(event.target.value)} />
      <p role="status" className={problem ? 'invalid' : 'valid'}>
        {problem ?? `Valid arguments for ${action.tool}.`}
      </p>
      <ConfirmOrCancel label="Approve edited call" disabled={problem !== null} onConfirm={() => onDone(value)} onCancel={onCancel} />
    </div>
  );
}

/** "N later steps: a, b, … and M more": the packet names at most the first few, `downstreamCount` counts them all. */
function describeDownstream(packet: ExplanationPacket): string {
  const count = packet.downstreamCount ?? packet.downstream.length;
  if (count === 0) return 'no later steps';
  const more = count - packet.downstream.length;
  return `${count} later step${count === 1 ? '' : 's'}: ${packet.downstream.join(', ')}${more > 0 ? `, … and ${more} more` : ''}`;
}

/** The packet in words; `brief` leaves out what an escalation's evidence already says (why, the failures, the choices). */
function Explanation({ request, brief = false }: { request: ApprovalRequest; brief?: boolean }) {
  const packet = request.explanation;
  return (
    <dl className="explanation">
      {!brief && (
        <>
          <dt>Why</dt>
          <dd>{packet.summary}</dd>
        </>
      )}
      <dt>Risk</dt>
      <dd>
        {packet.risk.level}
        {!brief && packet.risk.factors.length > 0 && ` — ${packet.risk.factors.join('; ')}`}
      </dd>
      <dt>Reversibility</dt>
      <dd>{packet.reversibility.replace('_', ' ')}</dd>
      <dt>Confidence</dt>
      <dd>{packet.confidence === null ? 'not reported' : `${Math.round(packet.confidence * 100)}%`}</dd>
      <dt>Cost</dt>
      <dd>
        {packet.cost.tokensUsed} tokens used{packet.cost.tokensLeft !== null && `, ${packet.cost.tokensLeft} left`}; ${packet.cost.estimatedUsd.toFixed(4)}
      </dd>
      <dt>Affects</dt>
      <dd>{describeDownstream(packet)}</dd>
      {!brief && packet.alternatives.length > 0 && (
        <>
          <dt>Alternatives</dt>
          <dd>{packet.alternatives.join('; ')}</dd>
        </>
      )}
    </dl>
  );
}

/** A budget raise: approve sets the cap to the value proposed; a value given here sets it instead. */
function BudgetEditor({ onDone, onCancel }: Omit<EditorProps, 'request'>) {
  const [value, setValue] = useState('');
  const id = useId();
  const number = Number(value);
  const valid = value.trim() !== '' && Number.isFinite(number) && number > 0;
  return (
    <div className="editor">
      <label htmlFor={id}>New cap</label>
      <input id={id} inputMode="decimal" value={value} onChange={(event) => setValue(event.target.value)} />
      <ConfirmOrCancel label="Raise to this cap" disabled={!valid} onConfirm={() => onDone(number)} onCancel={onCancel} />
    </div>
  );
}

/** Approving a budget raise sets the cap to the value the request proposes: the button names it. */
function approveLabel(request: ApprovalRequest): string {
  const raise = request.kind === 'budget_raise' ? BudgetRaiseActionSchema.safeParse(request.action) : null;
  return raise?.success ? `Approve: raise to ${describeCap(raise.data.cap, raise.data.proposed)}` : 'Approve';
}

/** Locks "never use TOOL" for the rest of the run; the proposed action is refused with it. */
function LockEditor({ initial, onDone, onCancel }: { initial: string | null; onDone(tool: string): void; onCancel(): void }) {
  const [tool, setTool] = useState(initial ?? BUILTIN_TOOL_NAMES[0] ?? '');
  const id = useId();
  const tools = initial && !isBuiltinTool(initial) ? [initial, ...BUILTIN_TOOL_NAMES] : BUILTIN_TOOL_NAMES;
  return (
    <div className="editor">
      <label htmlFor={id}>Never use</label>
      <select id={id} value={tool} onChange={(event) => setTool(event.target.value)}>
        {tools.map((name) => (
          <option key={name}>{name}</option>
        ))}
      </select>
      <ConfirmOrCancel label="Lock and refuse" onConfirm={() => onDone(tool)} onCancel={onCancel} />
    </div>
  );
}

/**
 * The approval queue, oldest first, as a modal dialog. Approving takes an explicit click: focus
 * starts on the dialog's heading, Enter and Escape never approve, and nothing here submits a form.
 * When the queue empties, focus goes back to where it was before the first request opened.
 */
export function ApprovalDialog() {
  const pending = useAppStore((state) => state.pending);
  const clusterPending = useAppStore((state) => state.clusterPending);
  const shown = useShownRequest(pending, clusterPending);
  useFocusReturn(shown !== null);
  return shown ? <ApprovalCard key={shown.request.id} request={shown.request} waiting={pending.length + clusterPending.length - 1} onCluster={shown.onCluster} /> : null;
}

/**
 * The request on screen stays there until it is answered or gone: one that arrives meanwhile, or a
 * list read again in another order, waits its turn. Next comes this desk's own runs' oldest: they
 * hold this desk's work, while the cluster's runs go on elsewhere.
 */
function useShownRequest(pending: readonly ApprovalRequest[], clusterPending: readonly ApprovalRequest[]): { request: ApprovalRequest; onCluster: boolean } | null {
  const [shownId, setShownId] = useState<string | null>(null);
  const request = pending.find((item) => item.id === shownId) ?? clusterPending.find((item) => item.id === shownId) ?? pending[0] ?? clusterPending[0];
  const id = request?.id ?? null;
  // Noted during render (React renders again at once), so no frame shows a request other than the one kept.
  if (id !== shownId) setShownId(id);
  return request ? { request, onCluster: !pending.includes(request) } : null;
}

/** A tool call's summary is the call itself, which the title says in words; one that says more (unconfined, possibly injected) is kept. */
function summaryAddsToTitle(request: ApprovalRequest): boolean {
  if (request.kind === 'plan' || request.kind === 'escalation') return false;
  if (request.kind !== 'tool_call') return true;
  const tool = (request.action as { tool?: unknown } | null)?.tool;
  return typeof tool !== 'string' || !request.summary.startsWith(`${tool} `);
}

/** Whose request it is: the run (a sub-agent's names its parent's goal and the step that started it) and the step; a run on the cluster says so. */
function Origin({ request, subagent, onCluster }: { request: ApprovalRequest; subagent: SubagentOrigin | null; onCluster: boolean }) {
  return (
    <p className="origin">
      {onCluster && 'On the Restate cluster: '}
      {subagent ? (
        <>
          Sub-agent of “{subagent.parentGoal}”
          {subagent.stepId && ` — step ${subagent.stepId}`}
          {request.stepId && `; its step ${request.stepId}`}
        </>
      ) : (
        <>
          Run {request.runId.slice(0, 8)}
          {request.stepId && `, step ${request.stepId}`}
          {onCluster && ', driven by a worker'}
        </>
      )}
    </p>
  );
}

/** A plan request leads with what changed when it is a revision: after a failed step, or after the operator rejected the plan before it. */
function PlanRevision({ request, replan }: { request: ApprovalRequest; replan: PlanChange | null }) {
  const revision = PlanRevisionActionSchema.safeParse(request.action);
  if (revision.success) {
    const { failedStepId, reason, added, replaced } = revision.data;
    return <PlanChanges added={added.map((step) => step.id)} removed={replaced} why={`Step ${failedStepId} failed: ${reason}`} />;
  }
  return replan && <PlanChanges added={replan.added} removed={replan.removed} why="Made again after you rejected the plan before it." />;
}

function ExactAction({ request, open }: { request: ApprovalRequest; open: boolean }) {
  return (
    <details className="exact-action" open={open}>
      <summary>The exact action</summary>
      {!summaryAddsToTitle(request) && <p className="meta">{request.summary}</p>}
      <pre className="action">{JSON.stringify(request.action, null, 2)}</pre>
    </details>
  );
}

/** The reason for a rejection, and whether it also stops the run. */
function RejectForm({ onSend, onCancel }: { onSend(feedback: string, stop: boolean): void; onCancel(): void }) {
  const [feedback, setFeedback] = useState('');
  const [stop, setStop] = useState(false);
  const feedbackId = useId();
  const hintId = useId();
  return (
    <div className="reject-form modal-actions">
      <label htmlFor={feedbackId}>Feedback</label>
      <textarea id={feedbackId} rows={3} aria-describedby={hintId} value={feedback} onChange={(event) => setFeedback(event.target.value)} autoFocus />
      <p id={hintId} className="meta">
        Optional: say why, and what to do instead. The agent reads it.
      </p>
      <div className="reject-row">
        <label className="inline">
          <input type="checkbox" checked={stop} onChange={(event) => setStop(event.target.checked)} /> Stop the run
        </label>
        <ConfirmOrCancel label="Send rejection" danger onConfirm={() => onSend(feedback.trim() || 'Rejected by the operator.', stop)} onCancel={onCancel} />
      </div>
    </div>
  );
}

/** One request; keyed by its id, so a new request starts with a fresh card. */
function ApprovalCard({ request, waiting, onCluster }: { request: ApprovalRequest; waiting: number; onCluster: boolean }) {
  const decide = useAppStore((state) => (onCluster ? state.decideOnCluster : state.decide));
  const [mode, setMode] = useState<Mode>('view');
  const heading = useRef<HTMLHeadingElement>(null);
  const kindId = useId();
  const titleId = useId();
  const countdown = useCountdown(request.expiresAt);
  const origin = useApprovalOrigin(request);

  useEffect(() => {
    heading.current?.focus();
  }, []);

  const lockable = LOCKABLE.has(request.kind);
  const tool = lockable ? (request.action as { tool: string }).tool : null;
  const mcpCall = mcpCallOf(request);
  const injection = possibleInjectionOf(request);
  const editable = request.kind === 'plan' || request.kind === 'tool_call' || request.kind === 'budget_raise';
  const planSteps = request.kind === 'plan' ? (request.action as { steps: PlanStep[] }).steps : null;
  const contract = useRunContract(request.runId);
  const outcome = request.kind === 'outcome' ? OutcomeActionSchema.safeParse(request.action) : null;
  const approveHintId = useId();
  const finish = (decision: Parameters<typeof decide>[1]) => void decide(request, decision);
  const revised = origin.replan !== null;
  const lead = (
    <>
      {injection && <InjectionWarning injection={injection} />}
      {summaryAddsToTitle(request) && (
        <p>
          <strong>{request.summary}</strong>
        </p>
      )}
      {request.stepId && <StepTraceDisclosure runId={request.runId} stepId={request.stepId} onCluster={onCluster} />}
    </>
  );
  return (
    <div className="modal-backdrop">
      <div
        className="modal approval-modal"
        role="dialog"
        aria-modal="true"
        aria-labelledby={`${kindId} ${titleId}`}
        onKeyDown={(event) => {
          if (event.key === 'Escape') event.preventDefault();
        }}
      >
        <div className="modal-header">
          <p id={kindId} className="approval-kind">
            Approval: {request.kind.replace('_', ' ')}
          </p>
          <h2 id={titleId} ref={heading} tabIndex={-1}>
            {approvalTitle(request, revised)}
          </h2>
          <Origin request={request} subagent={origin.subagent} onCluster={onCluster} />
          <p className="queue">
            {waiting > 0 ? `${waiting} more waiting` : 'Nothing else waiting'} · expires in <span className="countdown">{countdown}</span>
          </p>
        </div>
        {request.kind === 'escalation' ? (
          <EscalationPanel request={request} lead={lead} explanation={<Explanation request={request} brief />} onChoose={(choice) => finish({ verdict: 'edit', edited: EscalationChoiceSchema.parse(choice) })} />
        ) : request.kind === 'elicitation' ? (
          <ElicitationForm request={request} lead={lead} onDecide={finish} />
        ) : (
          <>
            <div className="modal-body">
              {lead}
              {mcpCall ? (
                <McpCallDetails call={mcpCall} request={request} />
              ) : outcome?.success ? (
                <OutcomePanel action={outcome.data} />
              ) : planSteps ? (
                <>
                  <PlanRevision request={request} replan={origin.replan} />
                  {contract && (
                    <section className="plan-contract" aria-label="Done means for this plan">
                      <p>
                        <strong>Done means:</strong> {contract.goal}
                      </p>
                      <CriteriaList contract={contract} outcomes={null} label="Success criteria" />
                    </section>
                  )}
                  <PlanSteps steps={planSteps} />
                  <PlanGraph steps={planSteps} />
                </>
              ) : null}
              {request.explanation.preview && <CallPreview preview={request.explanation.preview} reversibility={request.explanation.reversibility} />}
              <Explanation request={request} />
              {!mcpCall && !outcome?.success && <ExactAction request={request} open={false} />}
              {mode === 'edit' && request.kind === 'plan' && <PlanEditor request={request} contract={contract} onDone={(edited) => finish({ verdict: 'edit', edited })} onCancel={() => setMode('view')} />}
              {mode === 'edit' && request.kind === 'tool_call' && <ArgumentsEditor request={request} onDone={(edited) => finish({ verdict: 'edit', edited })} onCancel={() => setMode('view')} />}
              {mode === 'edit' && request.kind === 'budget_raise' && <BudgetEditor onDone={(edited) => finish({ verdict: 'edit', edited })} onCancel={() => setMode('view')} />}
              {mode === 'lock' && (
                <LockEditor initial={tool} onDone={(locked) => finish({ verdict: 'lock', constraint: { kind: 'never_tool', tool: locked }, feedback: `Never use ${locked}.` })} onCancel={() => setMode('view')} />
              )}
              {mode === 'view' && outcome?.success && (
                <p id={approveHintId} className="meta">
                  {outcomeApproveHint(outcome.data)}
                </p>
              )}
            </div>
            {mode === 'reject' && <RejectForm onSend={(feedback, stop) => finish({ verdict: 'reject', feedback, stop })} onCancel={() => setMode('view')} />}
            {mode === 'view' && (
              <div className="actions modal-actions">
                <button type="button" className="primary" aria-describedby={outcome?.success ? approveHintId : undefined} onClick={() => finish({ verdict: 'approve' })}>
                  {approveLabel(request)}
                </button>
                <button type="button" onClick={() => setMode('reject')}>
                  Reject
                </button>
                {request.kind === 'tool_call' && request.explanation.grantable === true && (
                  <button type="button" onClick={() => finish({ verdict: 'approve', scope: 'run_tool' })}>
                    Allow all like this for this run
                  </button>
                )}
                {editable && (
                  <button type="button" onClick={() => setMode('edit')}>
                    Edit
                  </button>
                )}
                {lockable && (
                  <button type="button" onClick={() => setMode('lock')}>
                    Lock constraint
                  </button>
                )}
              </div>
            )}
          </>
        )}
      </div>
    </div>
  );
}
