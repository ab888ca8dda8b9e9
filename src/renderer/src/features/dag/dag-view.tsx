import { Background, ControlButton, Controls, MiniMap, ReactFlow, ReactFlowProvider, useReactFlow, useStoreApi, type ColorMode } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { RunEvent } from '../../../../shared/schemas/events';
import type { RunDetail, StepView } from '../../../../shared/schemas/run-detail';
import { recoveryOf, recoveryOfStep, type RunRecovery } from '../validation/validation-model';
import { boundsOf, groupSize, inGroup, layoutPlan, NODE_HEIGHT, NODE_WIDTH, type PlanLayout, type Point, type Rect, type Size } from './dag-layout';
import { fitViewport, inView, layoutOrder, MAX_ZOOM, MIN_ZOOM, textZoom, type Viewport } from './dag-viewport';
import { RoutedEdge, type RoutedEdgeType } from './routed-edge';
import { NodeKeysContext, SelectStepContext, StepNode, ToggleGroupContext, type StepNodeData, type StepNodeType, type SubagentProgress } from './step-node';
import { useRovingNodes } from './use-roving-nodes';
import { stepStatusText } from './step-status';

const NODE_TYPES = { step: StepNode };
const EDGE_TYPES = { routed: RoutedEdge };

interface StepActivity {
  tool: string | null;
  tokens: number;
  startedAt: string | null;
}

/** What the events say each step is doing: its current tool, tokens so far, when it started. */
function activityOf(events: readonly RunEvent[]): Map<string, StepActivity> {
  const activity = new Map<string, StepActivity>();
  const of = (id: string) => activity.get(id) ?? (activity.set(id, { tool: null, tokens: 0, startedAt: null }).get(id) as StepActivity);
  for (const event of events) {
    if (event.type === 'step.started') of(event.stepId).startedAt = event.ts;
    else if (event.type === 'tool.started') of(event.stepId).tool = event.tool;
    else if (event.type === 'tool.completed') of(event.stepId).tool = null;
    else if (event.type === 'model.completed' && event.stepId) of(event.stepId).tokens += event.promptTokens + event.completionTokens;
  }
  return activity;
}

/** Where a plan's nodes go: the run's own plan at the top level, or a sub-agent's inside its step's group. */
interface NodeScope {
  /** Prefixes a child run's step ids (`<childRunId>/<stepId>`), so that they cannot collide with the parent's. */
  prefix: string;
  parentId?: string;
  runId: string | null;
}

const TOP: NodeScope = { prefix: '', runId: null };

/** What each plan step's node sees: the run's activity and recovery, the sub-agent each step started and the size of its group. */
interface PlanState {
  activity: Map<string, StepActivity>;
  recovery: RunRecovery;
  positions: Map<string, Point>;
  sizes: ReadonlyMap<string, Size>;
  subagents: ReadonlyMap<string, SubagentProgress>;
}

/** Which nodes stand out: the selected one, the one an approval holds, the one in the tab order. */
interface NodeMarks {
  selectedStepId: string | null;
  waitingStepId: string | null;
  tabStopId: string | null;
  /** The run is paused: the steps it stopped wait for Resume. */
  runPaused: boolean;
}

/** Keeps each node object as long as what it shows is unchanged, so React Flow re-renders only the nodes that changed. */
class NodeCache {
  private readonly entries = new Map<string, { key: string; node: StepNodeType }>();

  nodesFor(steps: readonly StepView[], plan: PlanState, marks: NodeMarks, scope: NodeScope = TOP): StepNodeType[] {
    const { selectedStepId, waitingStepId, tabStopId, runPaused } = marks;
    return steps.map((step) => {
      const id = scope.prefix + step.spec.id;
      const now = plan.activity.get(step.spec.id) ?? { tool: null, tokens: 0, startedAt: null };
      const { verdicts, repairs, revision, replacedBy } = recoveryOfStep(plan.recovery, step.spec.id);
      const verdict = verdicts.at(-1);
      const data: StepNodeData = {
        label: step.spec.id,
        description: step.spec.description,
        role: step.spec.role ?? null,
        status: step.status,
        statusText: stepStatusText(step.status, runPaused),
        waiting: waitingStepId === id,
        tool: now.tool,
        tokens: now.tokens,
        startedAt: now.startedAt,
        verdict: verdict ? { verdict: verdict.verdict, gap: verdict.gap } : null,
        repairs: repairs.length,
        revision,
        replacedBy,
        runId: scope.runId,
        subagent: plan.subagents.get(step.spec.id) ?? null,
        tabStop: tabStopId === id,
      };
      const position = plan.positions.get(step.spec.id) ?? { x: 0, y: 0 };
      const size = plan.sizes.get(step.spec.id) ?? { width: NODE_WIDTH, height: NODE_HEIGHT };
      const selected = selectedStepId === id;
      const key = JSON.stringify([data, position, size, selected, scope.parentId]);
      const cached = this.entries.get(id);
      if (cached?.key === key) return cached.node;
      const node: StepNodeType = { id, type: 'step', position, data, selected, draggable: false, ...size, ...(scope.parentId ? { parentId: scope.parentId, extent: 'parent' as const } : {}) };
      this.entries.set(id, { key, node });
      return node;
    });
  }
}

/** Which step started which child run. */
function subagentRuns(events: readonly RunEvent[]): Map<string, string> {
  return new Map(events.flatMap((event) => (event.type === 'subagent.started' ? [[event.stepId, event.childRunId] as const] : [])));
}

/** An expanded sub-agent: its child run's plan laid out inside its step's group. */
interface Group {
  stepId: string;
  childRunId: string;
  layout: PlanLayout;
  bounds: Rect;
}

function edgesOf(steps: readonly StepView[], layout: PlanLayout, prefix = ''): RoutedEdgeType[] {
  return steps.flatMap((step) =>
    step.spec.dependencies.map((dependency) => {
      const id = `${dependency}->${step.spec.id}`;
      return { id: prefix + id, type: 'routed', source: prefix + dependency, target: prefix + step.spec.id, data: { lanes: layout.lanes.get(id) ?? [] }, animated: step.status === 'running' || step.status === 'awaiting_approval' };
    }),
  );
}

/** Four corners: the usual sign for fitting to view. */
function FitIcon() {
  return (
    <svg viewBox="0 0 32 30" aria-hidden="true">
      <path d="M0 0h10v4H4v6H0zM22 0h10v10h-4V4h-6zM28 20h4v10H22v-4h6zM0 20h4v6h6v4H0z" />
    </svg>
  );
}

const ACTIVE: ReadonlySet<StepView['status']> = new Set(['running', 'awaiting_approval']);

/** Every node in reading order: the plan's steps column by column, each expanded group's steps after its sub-agent step. */
function nodeOrder(positions: ReadonlyMap<string, Point>, groups: readonly Group[]): string[] {
  return layoutOrder(positions).flatMap((id) => {
    const group = groups.find((candidate) => candidate.stepId === id);
    return group ? [id, ...layoutOrder(group.layout.positions).map((inner) => `${group.childRunId}/${inner}`)] : [id];
  });
}

interface DagViewProps {
  steps: readonly StepView[];
  events: readonly RunEvent[];
  /** The sub-agent runs the run started, by run id: a sub-agent step's group shows its child's plan. */
  children?: Readonly<Record<string, RunDetail>>;
  selectedStepId: string | null;
  /** The step a pending approval holds: highlighted, and brought into view when it starts waiting. */
  waitingStepId?: string | null;
  /** The run is paused: its stopped steps say "paused". */
  runPaused?: boolean;
  onSelectStep(id: string | null): void;
  colorMode?: ColorMode;
}

export function DagView(props: DagViewProps) {
  return (
    <ReactFlowProvider>
      <DagFlow {...props} />
    </ReactFlowProvider>
  );
}

/** A plan's shape: its steps and their dependencies. */
function planKeyOf(steps: readonly StepView[]): string {
  return steps.map((step) => `${step.spec.id}<${step.spec.dependencies.join(',')}`).join('|');
}

const NO_CHILDREN: Readonly<Record<string, RunDetail>> = {};

/**
 * The plan graph at a readable zoom: fitted to its pane when it loads, when its plan changes and when the pane is resized,
 * down to MIN_ZOOM (node text grows as it zooms out), past which it is panned. It follows the work, panning to a
 * step that starts running or waiting when it is out of view, until the operator moves the view; the Fit button and a new
 * plan make it follow again. The controls, and the minimap when the plan does not fit, sit in a strip under the pane,
 * so they never cover a node.
 */
function DagFlow({ steps, events, children = NO_CHILDREN, selectedStepId, waitingStepId = null, runPaused = false, onSelectStep, colorMode = 'system' }: DagViewProps) {
  const [cache] = useState(() => new NodeCache());
  const [fits, setFits] = useState(true);
  const pane = useRef<HTMLDivElement>(null);
  const { setViewport, setCenter, getViewport } = useReactFlow();
  const recovery = useMemo(() => recoveryOf(events), [events]);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(() => new Set());
  const toggleGroup = useCallback((stepId: string) => setExpanded((open) => new Set(open.has(stepId) ? [...open].filter((id) => id !== stepId) : [...open, stepId])), []);
  const started = useMemo(() => subagentRuns(events), [events]);
  const childPlansKey = [...expanded].map((stepId) => `${stepId}=${planKeyOf(children[started.get(stepId) ?? '']?.steps ?? [])}`).join(';');
  const groups = useMemo<Group[]>(
    () =>
      [...expanded].flatMap((stepId) => {
        const childRunId = started.get(stepId) ?? '';
        const child = children[childRunId];
        if (!child || child.steps.length === 0) return [];
        const layout = layoutPlan(child.steps.map((step) => step.spec));
        return [{ stepId, childRunId, layout, bounds: boundsOf(layout.positions) }];
      }),
    // eslint-disable-next-line react-hooks/exhaustive-deps -- a group's layout depends on its child's plan's shape only
    [childPlansKey],
  );
  const sizes = useMemo(() => new Map(groups.map((group) => [group.stepId, groupSize(group.bounds)])), [groups]);
  const planKey = `${planKeyOf(steps)}#${[...sizes].map(([id, size]) => `${id}:${size.width}x${size.height}`).join(',')}`;
  // eslint-disable-next-line react-hooks/exhaustive-deps -- the layout depends on the plan's shape (and its groups' sizes) only
  const layout = useMemo(() => layoutPlan(steps.map((step) => step.spec), sizes), [planKey]);
  const positions = layout.positions;
  const bounds = useMemo(() => boundsOf(positions, sizes), [positions, sizes]);
  const subagents = useMemo(
    () =>
      new Map(
        [...started].map(([stepId, childRunId]) => {
          const child = children[childRunId];
          return [stepId, { childRunId, expanded: expanded.has(stepId), done: child?.steps.filter((step) => step.status === 'completed').length ?? 0, total: child?.steps.length ?? 0 }];
        }),
      ),
    [started, children, expanded],
  );
  const store = useStoreApi();
  useEffect(() => {
    // The zoom node text is sized for, as a CSS variable: a zoom changes the text's size without rendering a node again.
    const zoomText = (zoom: number) => pane.current?.style.setProperty('--dag-zoom', String(textZoom(zoom)));
    zoomText(store.getState().transform[2]);
    return store.subscribe((state, previous) => {
      if (state.transform[2] !== previous.transform[2]) zoomText(state.transform[2]);
    });
  }, [store]);
  const order = useMemo(() => nodeOrder(positions, groups), [positions, groups]);
  const following = useRef(true);
  const stopFollowing = useCallback(() => {
    following.current = false;
  }, []);
  const { tabStopId, keys } = useRovingNodes(order, selectedStepId, onSelectStep, pane, stopFollowing);
  const nodes = useMemo(() => {
    const marks = { selectedStepId, waitingStepId, tabStopId, runPaused };
    const top = cache.nodesFor(steps, { activity: activityOf(events), recovery, positions, sizes, subagents }, marks);
    const inner = groups.flatMap(({ stepId, childRunId, layout: childLayout, bounds: childBounds }) => {
      const child = children[childRunId];
      if (!child) return [];
      const placed = new Map([...childLayout.positions].map(([id, position]) => [id, inGroup(position, childBounds)]));
      const plan = { activity: activityOf(child.events), recovery: recoveryOf(child.events), positions: placed, sizes: new Map(), subagents: new Map() };
      return cache.nodesFor(child.steps, plan, marks, { prefix: `${child.run.id}/`, parentId: stepId, runId: child.run.id });
    });
    return [...top, ...inner];
  }, [cache, steps, events, recovery, positions, sizes, subagents, groups, children, selectedStepId, waitingStepId, tabStopId, runPaused]);
  // The steps at work, the one an approval holds first: what a graph too large for its pane shows, and what the view follows.
  const activeIds = new Set(steps.filter((step) => ACTIVE.has(step.status)).map((step) => step.spec.id));
  const active = [...(waitingStepId ? [waitingStepId] : []), ...order.filter((id) => id !== waitingStepId && activeIds.has(id))];
  const activeKey = JSON.stringify(active);
  const activeNow = useRef(active);
  useEffect(() => {
    activeNow.current = JSON.parse(activeKey) as string[];
  }, [activeKey]);
  /** Centres the first of `ids` that lies outside the pane under `viewport`; shows `viewport` when none does. */
  const showHidden = useCallback(
    (ids: readonly string[], viewport: Viewport) => {
      const element = pane.current;
      if (!element) return;
      const sizeOf = (id: string) => sizes.get(id) ?? { width: NODE_WIDTH, height: NODE_HEIGHT };
      const hidden = ids.find((id) => {
        const position = positions.get(id);
        return position && !inView(position, sizeOf(id), viewport, element.clientWidth, element.clientHeight);
      });
      const position = hidden && positions.get(hidden);
      if (hidden && position) void setCenter(position.x + sizeOf(hidden).width / 2, position.y + sizeOf(hidden).height / 2, { zoom: viewport.zoom });
      else void setViewport(viewport);
    },
    [positions, sizes, setCenter, setViewport],
  );
  const fit = useCallback(() => {
    const element = pane.current;
    const viewport = element && fitViewport(bounds, element.clientWidth, element.clientHeight);
    if (!viewport) return;
    setFits(viewport.fits);
    showHidden(activeNow.current.slice(0, 1), viewport);
  }, [bounds, showHidden]);
  const fitAndFollow = useCallback(() => {
    following.current = true;
    fit();
  }, [fit]);
  useEffect(() => {
    const element = pane.current;
    if (!element) return;
    following.current = true;
    // The observer reports the pane's size once on observe: that is the fit for a new plan; later reports are resizes.
    const observer = new ResizeObserver(() => {
      if (following.current) fit();
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [fit]);
  const seen = useRef<ReadonlySet<string>>(new Set());
  useEffect(() => {
    const newlyActive = activeNow.current.filter((id) => !seen.current.has(id));
    seen.current = new Set(activeNow.current);
    if (following.current && newlyActive.length > 0) showHidden(newlyActive, getViewport());
  }, [activeKey, getViewport, showHidden]);
  const groupSteps = groups.map((group) => ({ group, steps: children[group.childRunId]?.steps ?? [] }));
  const statusKey = [steps, ...groupSteps.map((inner) => inner.steps)].map((plan) => plan.map((step) => step.status).join(',')).join('|');
  const edges = useMemo<RoutedEdgeType[]>(
    () => [...edgesOf(steps, layout), ...groupSteps.flatMap((inner) => edgesOf(inner.steps, inner.group.layout, `${inner.group.childRunId}/`))],
    // eslint-disable-next-line react-hooks/exhaustive-deps -- edges change with the plans and the statuses only
    [statusKey, layout, groups],
  );
  return (
    <div className="dag" aria-label="Plan graph">
      <div className="dag-pane" ref={pane}>
        <SelectStepContext value={onSelectStep}>
          <ToggleGroupContext value={toggleGroup}>
            <NodeKeysContext value={keys}>
              <ReactFlow
                colorMode={colorMode}
                nodes={nodes}
                edges={edges}
                nodeTypes={NODE_TYPES}
                edgeTypes={EDGE_TYPES}
                minZoom={MIN_ZOOM}
                maxZoom={MAX_ZOOM}
                onNodeClick={(_event, node) => onSelectStep(node.id)}
                onPaneClick={() => onSelectStep(null)}
                onMove={(event) => event && stopFollowing()}
                nodesConnectable={false}
                nodesFocusable={false}
                edgesFocusable={false}
                disableKeyboardA11y
                proOptions={{ hideAttribution: true }}
              >
                <Background />
              </ReactFlow>
            </NodeKeysContext>
          </ToggleGroupContext>
        </SelectStepContext>
      </div>
      <div className="dag-toolbar">
        {/* Our own fit button: React Flow's queues its own fitView, which would land after ours and show the whole plan at MIN_ZOOM instead. */}
        <Controls showInteractive={false} showFitView={false} orientation="horizontal" onZoomIn={stopFollowing} onZoomOut={stopFollowing}>
          <ControlButton onClick={fitAndFollow} aria-label="Fit view" title="Fit view">
            <FitIcon />
          </ControlButton>
        </Controls>
        {!fits && (
          <div className="dag-minimap" onPointerDown={stopFollowing} onWheel={stopFollowing}>
            <MiniMap pannable zoomable bgColor="var(--panel)" maskColor="rgba(127, 127, 127, 0.25)" nodeColor="var(--border)" nodeStrokeColor="var(--muted)" />
          </div>
        )}
      </div>
    </div>
  );
}
