import { useAppStore } from '../../store/use-app-store';

/** "Continues …": the finished run a follow-up goes on from, named by its goal, opening it. */
export function FollowUpOf({ runId }: { runId: string }) {
  const goal = useAppStore((state) => state.runs.find((run) => run.id === runId)?.goal ?? null);
  const selectRun = useAppStore((state) => state.selectRun);
  return (
    <span className="follow-up-of">
      Continues{' '}
      <button type="button" className="link" aria-label={`Open the run it continues: ${goal ?? runId.slice(0, 8)}`} onClick={() => void selectRun(runId)}>
        {goal ?? `run ${runId.slice(0, 8)}`}
      </button>
    </span>
  );
}
