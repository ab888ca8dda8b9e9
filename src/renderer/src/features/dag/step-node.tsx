import { Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import { memo, useEffect, useState } from 'react';
import type { StepStatus } from '../../../../shared/schemas/run';

export interface StepNodeData extends Record<string, unknown> {
  label: string;
  description: string;
  status: StepStatus;
  tool: string | null;
  tokens: number;
  startedAt: string | null;
}

export type StepNodeType = Node<StepNodeData, 'step'>;

/** How often each step's node rendered; read by the render-count test and the perf harness. */
export const renderCounts = new Map<string, number>();

function Elapsed({ since }: { since: string }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  return <span>{Math.max(0, Math.round((now - Date.parse(since)) / 1000))} s</span>;
}

/** One step: its status as colour and `data-status`, the tool it is in, its tokens, how long it has run. */
export const StepNode = memo(function StepNode({ id, data, selected }: NodeProps<StepNodeType>) {
  renderCounts.set(id, (renderCounts.get(id) ?? 0) + 1);
  return (
    <div className={`step-node status-${data.status}${selected ? ' selected' : ''}`} data-status={data.status} data-step-id={id} title={data.description}>
      <Handle type="target" position={Position.Left} />
      <div className="step-node-title">{data.label}</div>
      <div className="step-node-meta">
        <span className="step-node-status">{data.status.replace('_', ' ')}</span>
        {data.tool && <span>· {data.tool}</span>}
        {data.tokens > 0 && <span>· {data.tokens} tok</span>}
        {data.status === 'running' && data.startedAt && (
          <span>
            · <Elapsed since={data.startedAt} />
          </span>
        )}
      </div>
      <Handle type="source" position={Position.Right} />
    </div>
  );
});
