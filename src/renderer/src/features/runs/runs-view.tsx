import { useAppStore } from '../../store/use-app-store';

export function RunsView() {
  const runs = useAppStore((state) => state.runs);
  return (
    <section aria-labelledby="runs-heading" className="view">
      <h1 id="runs-heading">Runs</h1>
      {runs.length === 0 ? (
        <p className="empty">No runs yet.</p>
      ) : (
        <table className="runs-table">
          <thead>
            <tr>
              <th scope="col">Goal</th>
              <th scope="col">Status</th>
              <th scope="col">Started</th>
              <th scope="col">Answer</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((run) => (
              <tr key={run.id}>
                <td>{run.goal}</td>
                <td>
                  <span className={`status status-${run.status}`}>{run.status.replace('_', ' ')}</span>
                </td>
                <td>{new Date(run.createdAt).toLocaleString()}</td>
                <td>{run.answer ?? run.error ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
