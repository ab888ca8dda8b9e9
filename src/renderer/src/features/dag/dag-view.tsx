import { Background, Controls, MiniMap, ReactFlow, ReactFlowProvider, useReactFlow, type ColorMode } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { RunEvent } from '../../../../shared/schemas/events';
import type { StepView } from '../../../../shared/schemas/run-detail';
import { recoveryOf, recoveryOfStep, type RunRecovery } from '../validation/validation-model';
import { boundsOf, layoutPlan, NODE_HEIGHT, NODE_WIDTH, type Point } from './dag-layout';
import { fitViewport, MAX_ZOOM, MIN_ZOOM } from './dag-viewport';
import { RoutedEdge, type RoutedEdgeType } from './routed-edge';
import { SelectStepContext, StepNode, type StepNodeData, type StepNodeType } from './step-node';

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

/** Keeps each node object as long as what it shows is unchanged, so React Flow re-renders only the nodes that changed. */
class NodeCache {
  private readonly entries = new Map<string, { key: string; node: StepNodeType }>();

  nodesFor(steps: readonly StepView[], activity: Map<string, StepActivity>, recovery: RunRecovery, positions: Map<string, Point>, selectedStepId: string | null, waitingStepId: string | null): StepNodeType[] {
    return steps.map((step) => {
      const now = activity.get(step.spec.id) ?? { tool: null, tokens: 0, startedAt: null };
      const { verdicts, repairs, revision, replacedBy } = recoveryOfStep(recovery, step.spec.id);
      const verdict = verdicts.at(-1);
      const data: StepNodeData = {
        label: step.spec.id,
        description: step.spec.description,
        role: step.spec.role ?? null,
        status: step.status,
        waiting: waitingStepId === step.spec.id,
        tool: now.tool,
        tokens: now.tokens,
        startedAt: now.startedAt,
        verdict: verdict ? { verdict: verdict.verdict, gap: verdict.gap } : null,
        repairs: repairs.length,
        revision,
        replacedBy,
      };
      const position = positions.get(step.spec.id) ?? { x: 0, y: 0 };
      const selected = selectedStepId === step.spec.id;
      const key = JSON.stringify([data, position, selected]);
      const cached = this.entries.get(step.spec.id);
      if (cached?.key === key) return cached.node;
      const node: StepNodeType = { id: step.spec.id, type: 'step', position, data, selected, draggable: false, width: NODE_WIDTH, height: NODE_HEIGHT };
      this.entries.set(step.spec.id, { key, node });
      return node;
    });
  }
}

/** Graphs larger than this get a minimap, as does any graph that does not fit at the minimum zoom. */
const MINIMAP_ABOVE = 12;

interface DagViewProps {
  steps: readonly StepView[];
  events: readonly RunEvent[];
  selectedStepId: string | null;
  /** The step a pending approval holds: highlighted, and brought into view when it starts waiting. */
  waitingStepId?: string | null;
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

/**
 * The plan graph at a readable zoom: fitted to its pane (again on every resize) but never below MIN_ZOOM, where the
 * operator pans instead; the controls and the minimap sit in a strip under the pane, so they never cover a node.
 */
function DagFlow({ steps, events, selectedStepId, waitingStepId = null, onSelectStep, colorMode = 'system' }: DagViewProps) {
  const [cache] = useState(() => new NodeCache());
  const [fits, setFits] = useState(true);
  const pane = useRef<HTMLDivElement>(null);
  const { setViewport, setCenter } = useReactFlow();
  const recovery = useMemo(() => recoveryOf(events), [events]);
  const planKey = steps.map((step) => `${step.spec.id}<${step.spec.dependencies.join(',')}`).join('|');
  // eslint-disable-next-line react-hooks/exhaustive-deps -- the layout depends on the plan's shape only
  const layout = useMemo(() => layoutPlan(steps.map((step) => step.spec)), [planKey]);
  const positions = layout.positions;
  const bounds = useMemo(() => boundsOf(positions), [positions]);
  const nodes = useMemo(
    () => cache.nodesFor(steps, activityOf(events), recovery, positions, selectedStepId, waitingStepId),
    [cache, steps, events, recovery, positions, selectedStepId, waitingStepId],
  );
  const waiting = waitingStepId ? positions.get(waitingStepId) : undefined;
  const refit = useCallback(() => {
    const element = pane.current;
    const fit = element && fitViewport(bounds, element.clientWidth, element.clientHeight);
    if (!fit) return;
    setFits(fit.fits);
    if (!fit.fits && waiting) void setCenter(waiting.x + NODE_WIDTH / 2, waiting.y + NODE_HEIGHT / 2, { zoom: fit.zoom });
    else void setViewport({ x: fit.x, y: fit.y, zoom: fit.zoom });
  }, [bounds, waiting, setCenter, setViewport]);
  useEffect(() => {
    const element = pane.current;
    if (!element) return;
    // The observer reports the pane's size once on observe: that is the first fit, and the refit for a new plan or a newly waiting step.
    const observer = new ResizeObserver(() => refit());
    observer.observe(element);
    return () => observer.disconnect();
  }, [refit]);
  const statusKey = steps.map((step) => step.status).join(',');
  const edges = useMemo<RoutedEdgeType[]>(
    () =>
      steps.flatMap((step) =>
        step.spec.dependencies.map((dependency) => {
          const id = `${dependency}->${step.spec.id}`;
          return { id, type: 'routed', source: dependency, target: step.spec.id, data: { lanes: layout.lanes.get(id) ?? [] }, animated: step.status === 'running' || step.status === 'awaiting_approval' };
        }),
      ),
    // eslint-disable-next-line react-hooks/exhaustive-deps -- edges change with the plan and the statuses only
    [statusKey, layout],
  );
  return (
    <div className="dag" aria-label="Plan graph">
      <div className="dag-pane" ref={pane}>
        <SelectStepContext value={onSelectStep}>
          <ReactFlow colorMode={colorMode} nodes={nodes} edges={edges} nodeTypes={NODE_TYPES} edgeTypes={EDGE_TYPES} minZoom={MIN_ZOOM} maxZoom={MAX_ZOOM} onNodeClick={(_event, node) => onSelectStep(node.id)} onPaneClick={() => onSelectStep(null)} nodesConnectable={false} proOptions={{ hideAttribution: true }}>
            <Background />
          </ReactFlow>
        </SelectStepContext>
      </div>
      <div className="dag-toolbar">
        <Controls showInteractive={false} orientation="horizontal" onFitView={refit} />
        {(nodes.length > MINIMAP_ABOVE || !fits) && <MiniMap pannable zoomable bgColor="var(--panel)" maskColor="rgba(127, 127, 127, 0.25)" nodeColor="var(--border)" nodeStrokeColor="var(--muted)" />}
      </div>
    </div>
  );
}
