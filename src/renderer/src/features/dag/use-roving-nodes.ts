import { useReactFlow } from '@xyflow/react';
import { useEffect, useMemo, useRef, useState, type FocusEvent, type KeyboardEvent, type RefObject } from 'react';
import type { NodeKeys } from './step-node';

interface RovingNodes {
  /** The one node in the tab order: the one last focused, else the selected one, else the first. */
  tabStopId: string | null;
  keys: NodeKeys;
}

const STEPS: Record<string, (index: number, last: number) => number> = {
  ArrowRight: (index, last) => Math.min(last, index + 1),
  ArrowDown: (index, last) => Math.min(last, index + 1),
  ArrowLeft: (index) => Math.max(0, index - 1),
  ArrowUp: (index) => Math.max(0, index - 1),
  Home: () => 0,
  End: (_index, last) => last,
};

const within = (box: DOMRect, room: DOMRect) => box.left >= room.left && box.top >= room.top && box.right <= room.right && box.bottom <= room.bottom;

/**
 * Keyboard access to the graph's nodes (roving tabindex): Tab reaches one node, the arrows, Home and End move between nodes
 * in `order`, Enter and Space open the focused step. A node focused from the keyboard outside the pane is brought into view,
 * which is the operator moving the view (`onOperatorMove`).
 */
export function useRovingNodes(order: readonly string[], selectedStepId: string | null, onSelectStep: (id: string) => void, pane: RefObject<HTMLDivElement | null>, onOperatorMove: () => void): RovingNodes {
  const [focusedId, setFocusedId] = useState<string | null>(null);
  const { getInternalNode, getViewport, setCenter } = useReactFlow();
  const tabStopId = [focusedId, selectedStepId].find((id) => id !== null && order.includes(id)) ?? order[0] ?? null;
  // The handlers read the latest order and callback, so that the context every node reads stays the same object.
  const latest = useRef({ order, onSelectStep });
  useEffect(() => {
    latest.current = { order, onSelectStep };
  });
  const keys = useMemo<NodeKeys>(() => {
    const focusNode = (id: string) => pane.current?.querySelector<HTMLElement>(`.react-flow__node[data-id="${CSS.escape(id)}"] .step-node`)?.focus({ preventScroll: true });
    return {
      onKeyDown(event: KeyboardEvent<HTMLElement>, id: string) {
        if (event.target !== event.currentTarget) return;
        const { order, onSelectStep } = latest.current;
        if (event.key === 'Enter' || event.key === ' ') {
          event.preventDefault();
          onSelectStep(id);
          return;
        }
        const move = STEPS[event.key];
        const index = order.indexOf(id);
        if (!move || index < 0) return;
        event.preventDefault();
        focusNode(order[move(index, order.length - 1)] as string);
      },
      onFocus(event: FocusEvent<HTMLElement>, id: string) {
        if (event.target !== event.currentTarget) return;
        setFocusedId(id);
        const room = pane.current?.getBoundingClientRect();
        const node = getInternalNode(id);
        if (!room || !node || !event.currentTarget.matches(':focus-visible') || within(event.currentTarget.getBoundingClientRect(), room)) return;
        const { x, y } = node.internals.positionAbsolute;
        void setCenter(x + (node.measured.width ?? 0) / 2, y + (node.measured.height ?? 0) / 2, { zoom: getViewport().zoom });
        onOperatorMove();
      },
    };
  }, [pane, onOperatorMove, getInternalNode, getViewport, setCenter]);
  return { tabStopId, keys };
}
