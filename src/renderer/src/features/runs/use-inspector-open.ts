import { useCallback, useState, useSyncExternalStore } from 'react';

/** From this window width the step details stay beside the graph; below it they take room from the graph only when asked for. */
const WIDE_DESK = '(min-width: 1200px)';

function useMediaQuery(query: string): boolean {
  const subscribe = useCallback(
    (onChange: () => void) => {
      const list = matchMedia(query);
      list.addEventListener('change', onChange);
      return () => list.removeEventListener('change', onChange);
    },
    [query],
  );
  return useSyncExternalStore(subscribe, () => matchMedia(query).matches);
}

/** What the operator last chose with the toggle, for the window width and selected step it was chosen under. */
interface Choice {
  wide: boolean;
  stepId: string | null;
  open: boolean;
}

export interface InspectorOpen {
  open: boolean;
  toggle(): void;
  /** A step was selected on purpose (even the one already selected): its details show. */
  reveal(): void;
}

/**
 * Whether the step details show: on a wide window always, on a narrow one once a step is selected.
 * The toggle overrides that until the window crosses the width or another step is selected.
 */
export function useInspectorOpen(selectedStepId: string | null): InspectorOpen {
  const wide = useMediaQuery(WIDE_DESK);
  const [choice, setChoice] = useState<Choice | null>(null);
  const chosen = choice !== null && choice.wide === wide && choice.stepId === selectedStepId;
  const open = chosen ? choice.open : wide || selectedStepId !== null;
  const toggle = useCallback(() => setChoice({ wide, stepId: selectedStepId, open: !open }), [wide, selectedStepId, open]);
  const reveal = useCallback(() => setChoice(null), []);
  return { open, toggle, reveal };
}
