import { useEffect, useId } from 'react';
import { inAppTerms } from '../../../../shared/app-advice';
import { describeEvent } from '../../../../shared/event-lines';
import { clusterRunStanding, type ClusterRun, type InboxItem } from '../../../../shared/schemas/run-order';
import { useAppStore } from '../../store/use-app-store';
import { statusLabel } from '../contract/contract-model';

function stateOf(item: InboxItem): string {
  return item.waiting ? 'waits for your answer' : statusLabel(item.run.status);
}

function originOf(item: InboxItem): string {
  return item.scheduleId === null ? 'sent with --detach' : `schedule ${item.scheduleId}`;
}

/** One run in the inbox: its goal, where it came from and when, and the way to open it. */
function InboxEntry({ item }: { item: InboxItem }) {
  const openInboxRun = useAppStore((state) => state.openInboxRun);
  const goalId = useId();
  const at = item.firedAt ?? item.run.createdAt;
  return (
    <li className="inbox-item" aria-labelledby={goalId}>
      <h2 id={goalId}>{item.run.goal}</h2>
      <p className="inbox-facts">
        <span className={item.waiting ? 'inbox-waiting' : undefined}>{stateOf(item)}</span> · {originOf(item)} · <time dateTime={at}>{new Date(at).toLocaleString()}</time>
      </p>
      <button type="button" aria-label={`Open run ${item.run.goal}`} onClick={() => void openInboxRun(item.run.id)}>
        Open run
      </button>
    </li>
  );
}

/** What the cluster's runs ask, answered in the approval dialog; or why the cluster could not be asked. */
function ClusterApprovalsState() {
  const waiting = useAppStore((state) => state.clusterPending.length);
  const problem = useAppStore((state) => state.clusterApprovalsProblem);
  if (problem) return <p role="status" className="inbox-problem">The approvals waiting on the cluster could not be read: {inAppTerms(problem)}</p>;
  if (waiting === 0) return null;
  return <p role="status">{waiting === 1 ? 'One request from a run on the cluster waits for your answer' : `${waiting} requests from runs on the cluster wait for your answer`}, in the approval dialog.</p>;
}

/** What a run on the cluster did, in words, as its worker sent it: the same lines `archon follow` prints. */
function ClusterRunEvents({ run }: { run: ClusterRun }) {
  const events = useAppStore((state) => state.clusterRunEvents);
  const problem = useAppStore((state) => state.clusterRunEventsProblem);
  const lines = events.flatMap((event) => describeEvent(event) ?? []);
  if (problem)
    return (
      <p role="status" className="inbox-problem">
        Its events could not be read: {inAppTerms(problem)}
      </p>
    );
  if (lines.length === 0) return <p className="empty">No events of it on the cluster: its worker has sent none yet, or they are older than the 14 days the cluster keeps them (they stay on that worker&apos;s data dir).</p>;
  return (
    // Focusable: it scrolls, and a keyboard must reach what is below.
    <ol className="cluster-run-events" aria-label={`Events of run ${run.runId.slice(0, 8)}`} tabIndex={0}>
      {lines.map((line, index) => (
        <li key={index}>{line}</li>
      ))}
    </ol>
  );
}

/** One run on the cluster: how it stands, where it came from, and what it did, shown on demand. */
function ClusterRunEntry({ run }: { run: ClusterRun }) {
  const shown = useAppStore((state) => state.shownClusterRun === run.runId);
  const showClusterRunEvents = useAppStore((state) => state.showClusterRunEvents);
  const stopAsked = useAppStore((state) => state.clusterRunsStopAsked.has(run.runId));
  const stopClusterRun = useAppStore((state) => state.stopClusterRun);
  return (
    <li className="inbox-item">
      <h3>{run.goal}</h3>
      <p className="inbox-facts">
        {clusterRunStanding(run, statusLabel)} · {run.scheduleId === null ? 'sent with --detach' : `schedule ${run.scheduleId}`} · run {run.runId.slice(0, 8)}
      </p>
      {run.problem && <p className="inbox-problem">{inAppTerms(run.problem)}</p>}
      <button type="button" aria-expanded={shown} aria-label={`Events of run ${run.runId.slice(0, 8)}: ${run.goal}`} onClick={() => void showClusterRunEvents(shown ? null : run.runId)}>
        Events
      </button>
      {run.state === 'under_way' && (
        // Kept focusable once asked (aria-disabled): focus stays where the keyboard left it.
        <button
          type="button"
          className="danger"
          aria-disabled={stopAsked}
          aria-label={`${stopAsked ? 'Stop asked of' : 'Stop'} run ${run.runId.slice(0, 8)} on the cluster: ${run.goal}`}
          onClick={() => {
            if (!stopAsked) void stopClusterRun(run.runId);
          }}
        >
          {stopAsked ? 'Stop asked' : 'Stop'}
        </button>
      )}
      {shown && <ClusterRunEvents run={run} />}
    </li>
  );
}

/** The runs the cluster's workers drive or drove, from whichever machine sent them, as the cluster lists them. */
function ClusterRuns() {
  const hasCluster = useAppStore((state) => Boolean(state.settings?.cluster));
  const runs = useAppStore((state) => state.clusterRuns);
  const problem = useAppStore((state) => state.clusterRunsProblem);
  const refreshClusterRuns = useAppStore((state) => state.refreshClusterRuns);
  // Read as the Inbox opens, then with the inbox's poll while it stays open.
  useEffect(() => void refreshClusterRuns(), [refreshClusterRuns]);
  if (!hasCluster) return null;
  return (
    <section aria-labelledby="cluster-runs-heading" className="inbox-cluster">
      <h2 id="cluster-runs-heading">On the cluster</h2>
      {problem ? (
        <p role="status" className="inbox-problem">
          The cluster&apos;s runs could not be read: {inAppTerms(problem)}
        </p>
      ) : runs.length === 0 ? (
        <p className="empty">No run on the cluster.</p>
      ) : (
        <ul className="inbox-list" aria-label="Runs on the cluster">
          {runs.map((run) => (
            <ClusterRunEntry key={run.runId} run={run} />
          ))}
        </ul>
      )}
    </section>
  );
}

/** The runs workers of a Restate cluster drove here that ended or wait for an answer; what is listed while it is open counts as seen. */
export function InboxView() {
  const items = useAppStore((state) => state.inbox);
  const markInboxSeen = useAppStore((state) => state.markInboxSeen);
  useEffect(() => markInboxSeen(), [items, markInboxSeen]);
  return (
    <section aria-labelledby="inbox-heading" className="view inbox">
      <h1 id="inbox-heading">Inbox</h1>
      <p className="inbox-intro">Runs that workers of a Restate cluster drove: schedules&apos; runs and detached ones, once they end or wait for you.</p>
      <ClusterApprovalsState />
      {items.length === 0 ? (
        <p className="empty">Nothing in the inbox.</p>
      ) : (
        <ul className="inbox-list" aria-label="Inbox">
          {items.map((item) => (
            <InboxEntry key={item.run.id} item={item} />
          ))}
        </ul>
      )}
      <ClusterRuns />
    </section>
  );
}
