import { Handle, Position, useReactFlow, type Node, type NodeProps } from '@xyflow/react';
import { createContext, memo, use, useEffect, useState, type FocusEvent, type KeyboardEvent, type ReactNode } from 'react';
import type { StepStatus } from '../../../../shared/schemas/run';
import type { Verdict } from '../../../../shared/schemas/validation';
import { NODE_FONT_SIZE } from './dag-viewport';

/** A sub-agent step's child run: how far it got, and whether its group shows its steps. */
export interface SubagentProgress {
  childRunId: string;
  expanded: boolean;
  done: number;
  total: number;
}

export interface StepNodeData extends Record<string, unknown> {
  label: string;
  description: string;
  /** The plan step's role, if it names one. */
  role: string | null;
  status: StepStatus;
  /** The status in words: a step its paused run stopped says "paused". */
  statusText: string;
  /** Whether the operator's answer to a pending approval is what this step waits for. */
  waiting: boolean;
  tool: string | null;
  tokens: number;
  startedAt: string | null;
  /** The validators' latest verdict on the step's result. */
  verdict: { verdict: Verdict; gap: number } | null;
  repairs: number;
  /** The plan revision that added the step; null for a step of the first plan. */
  revision: number | null;
  /** The steps a scoped re-plan put in this one's place; null while it stands. */
  replacedBy: string[] | null;
  /** The child run a step of a sub-agent's plan belongs to; null for the run's own steps. */
  runId: string | null;
  /** For a sub-agent step that started its child run. */
  subagent: SubagentProgress | null;
  /** Whether this node is the graph's one stop in the tab order (roving tabindex). */
  tabStop: boolean;
}

export type StepNodeType = Node<StepNodeData, 'step'>;

/** Selects a step in the inspector: what a jump from a replaced step to its replacement does first. */
export const SelectStepContext = createContext<(id: string | null) => void>(() => undefined);

/** Expands or collapses a sub-agent step's group. */
export const ToggleGroupContext = createContext<(stepId: string) => void>(() => undefined);

/** What a node does with the keyboard and with focus: arrows move between nodes, Enter and Space open the step. */
export interface NodeKeys {
  onKeyDown(event: KeyboardEvent<HTMLElement>, id: string): void;
  onFocus(event: FocusEvent<HTMLElement>, id: string): void;
}

export const NodeKeysContext = createContext<NodeKeys>({ onKeyDown: () => undefined, onFocus: () => undefined });

/** How often each step's node rendered; read by the render-count test and the perf harness. */
export const renderCounts = new Map<string, number>();

/** Two bars, as on a pause button: drawn, because the hand emoji it replaces is missing from common fonts. */
const AWAITING_ICON = (
  <svg width="0.8em" height="0.8em" viewBox="0 0 10 10" fill="currentColor">
    <rect x="1.5" y="1" width="2.5" height="8" />
    <rect x="6" y="1" width="2.5" height="8" />
  </svg>
);

const STATUS_ICONS: Record<StepStatus, ReactNode> = {
  pending: '○',
  running: '▶',
  awaiting_approval: AWAITING_ICON,
  completed: '✓',
  failed: '✗',
  skipped: '↷',
  stopped: '■',
};

function Elapsed({ since }: { since: string }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return <span>{Math.max(0, Math.round((now - Date.parse(since)) / 1000))} s</span>;
}

/** Links from a replaced step to the steps that took its place: selects one and brings it into view. */
function Replacements({ ids }: { ids: string[] }) {
  const select = use(SelectStepContext);
  const { fitView } = useReactFlow();
  return (
    <div className="step-node-replaced">
      replaced by{' '}
      {ids.map((id) => (
        <button
          key={id}
          type="button"
          className="link nodrag"
          aria-label={`Go to replacement ${id}`}
          onClick={(event) => {
            event.stopPropagation();
            select(id);
            void fitView({ nodes: [{ id }], maxZoom: 1.2 });
          }}
        >
          {id}
        </button>
      ))}
    </div>
  );
}

/** A sub-agent's progress, and the button that shows its steps inside its node or folds them away. */
function SubagentToggle({ stepId, subagent }: { stepId: string; subagent: SubagentProgress }) {
  const toggle = use(ToggleGroupContext);
  const verb = subagent.expanded ? 'Collapse' : 'Expand';
  // The button comes first and says one word: zoomed out, the larger text leaves room for little more than the title and this line.
  return (
    <div className="step-node-subagent">
      {subagent.total > 0 && (
        <button
          type="button"
          className="link nodrag"
          aria-expanded={subagent.expanded}
          aria-label={`${verb} sub-agent ${stepId}`}
          onClick={(event) => {
            event.stopPropagation();
            toggle(stepId);
          }}
        >
          {verb}
        </button>
      )}
      <span>sub-agent: {subagent.total === 0 ? 'planning' : `${subagent.done} of ${subagent.total} steps done`}</span>
    </div>
  );
}

/** What a screen reader says for a node: its id, status and, when there is one, the validators' verdict. */
export function nodeName(data: StepNodeData): string {
  const parts = [`Step ${data.label}`, data.statusText];
  if (data.verdict) parts.push(data.verdict.verdict);
  if (data.replacedBy) parts.push('replaced');
  return parts.join(', ');
}

/** Under the title, most needed first: zoomed out, the larger text leaves room for fewer lines and the node clips the last ones. */
function Body({ data }: { data: StepNodeData }) {
  return (
    <>
      <div className="step-node-meta">
        <span className="step-node-status">{data.statusText}</span>
        {data.revision !== null && <span className="step-node-revision">· revision {data.revision}</span>}
        {data.tool && <span>· {data.tool}</span>}
        {data.tokens > 0 && <span>· {data.tokens} tok</span>}
        {data.status === 'running' && data.startedAt && (
          <span>
            · <Elapsed since={data.startedAt} />
          </span>
        )}
      </div>
      {(data.verdict || data.repairs > 0) && (
        <div className="step-node-meta">
          {data.verdict && (
            <span className={`verdict verdict-${data.verdict.verdict}`}>
              {data.verdict.verdict === 'pass' ? '✓ pass' : '✗ fail'} · gap {data.verdict.gap.toFixed(2)}
            </span>
          )}
          {data.repairs > 0 && <span className="step-node-repairs">{data.repairs === 1 ? '1 repair' : `${data.repairs} repairs`}</span>}
        </div>
      )}
      {data.replacedBy && <Replacements ids={data.replacedBy} />}
      <div className="step-node-description">{data.description}</div>
    </>
  );
}

/**
 * One step: its id, role and short description; its status as icon, colour and `data-status`, the tool it is in, its tokens, how long it has run;
 * the validators' verdict, its repairs and the revision that added it; greyed when a re-plan replaced it.
 * Its text grows as the graph zooms out (NODE_FONT_SIZE), so that none renders under 11 px.
 */
export const StepNode = memo(function StepNode({ id, data, selected }: NodeProps<StepNodeType>) {
  renderCounts.set(id, (renderCounts.get(id) ?? 0) + 1);
  const keys = use(NodeKeysContext);
  const replaced = data.replacedBy !== null;
  const group = data.subagent?.expanded === true;
  return (
    <div
      className={`step-node status-${data.status}${replaced ? ' replaced' : ''}${selected ? ' selected' : ''}${data.waiting ? ' waiting' : ''}${group ? ' group' : ''}`}
      style={{ fontSize: NODE_FONT_SIZE }}
      role="group"
      aria-label={nodeName(data)}
      tabIndex={data.tabStop ? 0 : -1}
      onKeyDown={(event) => keys.onKeyDown(event, id)}
      onFocus={(event) => keys.onFocus(event, id)}
      data-status={data.status}
      data-waiting={data.waiting ? 'true' : undefined}
      data-step-id={data.label}
      data-run-id={data.runId ?? undefined}
      data-expanded={data.subagent ? String(data.subagent.expanded) : undefined}
      data-replaced={replaced ? 'true' : undefined}
      data-verdict={data.verdict?.verdict}
      data-revision={data.revision ?? undefined}
      title={data.description}
    >
      <Handle type="target" position={Position.Left} />
      <div className="step-node-title">
        <span className="step-node-icon" aria-hidden="true">
          {STATUS_ICONS[data.status]}
        </span>
        <span className="step-node-id">{data.label}</span>
        {data.role && <span className="step-node-role">{data.role}</span>}
      </div>
      {data.subagent && <SubagentToggle stepId={data.label} subagent={data.subagent} />}
      {group ? null : <Body data={data} />}
      <Handle type="source" position={Position.Right} />
    </div>
  );
});
