import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { ArchonStore } from '../../../../src/core/store/archon-store';
import { RunEventSchema } from '../../../../src/shared/schemas/events';
import { describeEvent } from '../../../../src/shared/event-lines';
import { InboxItemSchema } from '../../../../src/shared/schemas/run-order';
import { planReply, stepIdOf, type RecordedRequest, type ScriptedReply } from '../../../kit/scripted-model-server';
import { runArchon, spawnArchon, useServe } from '../../../support/archon-process';
import { axeViolations } from '../../../support/axe';
import { useBrowser } from '../../../support/browser';
import { useModelServers } from '../../../support/model-servers';
import { lookAway, notificationsOf, openWatchedPage } from '../../../support/page-notifications';
import { processesMatching } from '../../../support/processes';
import { until, useRestate } from '../../../support/restate';
import { useTempDirs } from '../../../support/temp-dir';

// A Restate server, a worker, a host and a browser on a loaded 2-core machine: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 240_000 });
const tempDir = useTempDirs();
const restate = useRestate();
const serveModel = useModelServers();
const startServe = useServe();
const launchBrowser = useBrowser();

/** One step: append a mark to the ledger with run_command, then report. */
function appendMark(request: RecordedRequest): ScriptedReply {
  if (request.purpose === 'plan') return planReply([{ id: 'mark', description: 'Append a mark to the ledger', expected_output: 'the command ran' }]);
  if (request.purpose === 'final') return { content: 'The mark is in the ledger.' };
  const answered = request.body.messages?.at(-1)?.role === 'tool';
  return answered ? { content: `${stepIdOf(request) ?? 'mark'} is in the ledger.` } : { toolCalls: [{ name: 'run_command', arguments: { command: 'echo marked >> ledger.txt' } }] };
}

const LOCAL_GOAL = 'look over the desk';

/**
 * The cluster's run appends a mark (above); the desk's own run, started in the page, looks and
 * reports, its plan held until `release` so that its request arrives while the cluster's is shown.
 */
function deskAndClusterRuns() {
  let release = () => {};
  const held = new Promise<void>((done) => (release = done));
  const reply = async (request: RecordedRequest): Promise<ScriptedReply> => {
    if (request.purpose === 'plan' && JSON.stringify(request.body.messages ?? []).includes(LOCAL_GOAL)) {
      await held;
      return planReply([{ id: 'look', description: 'Look over the desk' }]);
    }
    return stepIdOf(request) === 'look' ? { content: 'The desk is tidy.' } : appendMark(request);
  };
  return { reply, release: () => release() };
}

/** The app in Chromium at 1024×700 through `archon serve` on `dataDir`, its notifications watched and allowed. */
async function openDesk(dataDir: string, workspace: string, modelUrl: string): Promise<Page> {
  const serve = await startServe(dataDir, ['--workspace', workspace, '--model-url', modelUrl]);
  return openWatchedPage(await launchBrowser(), serve);
}

/** The events of a run in a data dir, as the worker that drove it wrote them. */
function eventsIn(dataDir: string, runId: string) {
  const store = ArchonStore.open(dataDir);
  try {
    return store.runs.events(runId).map((event) => RunEventSchema.parse(event));
  } finally {
    store.close();
  }
}

/** A Restate server with one worker on a data dir of its own, and a desk's data dir whose Settings name that cluster. */
async function clusterWithDesk() {
  const cluster = await restate.server();
  const secretFile = restate.secretFile();
  const [workspace, workerDir, deskDir] = [tempDir(), tempDir(), tempDir()];
  await restate.worker(cluster, { id: 'w1', workspace, dataDir: workerDir, secretFile });
  const store = ArchonStore.open(deskDir);
  try {
    store.updateSettings({ cluster: { ingress: cluster.ingress, admin: cluster.admin, secretFile } });
  } finally {
    store.close();
  }
  return { cluster, secretFile, workspace, workerDir, deskDir };
}

describe('approvals of runs on the cluster, in the app (Chromium through archon serve, a real Restate cluster)', () => {
  it('a detached run on a worker of another data dir asks; the desk shows each request in the approval dialog after the one on screen, notifies it, and the answers drive the run to its end, which the Inbox lists as the cluster does', async () => {
    const { cluster, secretFile, workspace, workerDir, deskDir } = await clusterWithDesk();
    const runs = deskAndClusterRuns();
    const model = await serveModel({ reply: runs.reply });
    const page = await openDesk(deskDir, workspace, model.url);
    // The desk's own run, started in the page: its plan waits until the cluster's request is on screen.
    await page.getByLabel('Goal').fill(LOCAL_GOAL);
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await lookAway(page);

    const clusterFlags = ['--restate-ingress', cluster.ingress, '--restate-admin', cluster.admin, '--cluster-secret-file', secretFile];
    const sent = await spawnArchon(['run', 'append a mark to the ledger', '--engine', 'restate', '--detach', '--approve', 'desk', '--policy', 'balanced', '--model-url', model.url, '--workspace', workspace, '--json', ...clusterFlags]).done;
    expect(sent.status, sent.stderr).toBe(0);
    const { runId } = JSON.parse(sent.stdout) as { runId: string };

    const dialog = page.getByRole('dialog');
    const origin = dialog.locator('.origin');
    const onCluster = `On the Restate cluster: Run ${runId.slice(0, 8)}, driven by a worker`;
    await origin.filter({ hasText: onCluster }).waitFor();
    expect(await dialog.locator('.approval-kind').textContent()).toBe('Approval: plan');
    expect(await axeViolations(page)).toEqual([]);
    const [notice] = await notificationsOf(page);
    expect(notice?.title).toBe('Archon: approval waiting (plan)');
    expect(notice?.body).toMatch(new RegExp(`^Run ${runId.slice(0, 8)}: `));

    // The desk's own request arrives while the cluster's is on screen: it waits its turn, the card in front stays.
    runs.release();
    await dialog.locator('.queue').filter({ hasText: '1 more waiting' }).waitFor();
    expect(await origin.textContent()).toBe(onCluster);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Inbox', exact: true }).click();
    await page.getByRole('region', { name: 'Inbox' }).getByText('One request from a run on the cluster waits for your answer, in the approval dialog.').waitFor();

    const ended = () => runArchon(['inbox', '--json', '--data-dir', workerDir]).stdout.trim().split('\n').filter(Boolean).map((line) => InboxItemSchema.parse(JSON.parse(line))).find((item) => !item.waiting && item.run.status !== 'running');
    // Each request as it comes, the desk's and the cluster's (the plan, the command, the outcome), approved in the dialog.
    const answered: string[] = [];
    // The command's step trace, asked from the dialog: its events are on the worker's data dir, not here.
    let traceSays: string | null = null;
    await until(
      async () => {
        if (await dialog.isVisible()) {
          const shown = `${await origin.textContent()} | ${await dialog.locator('.approval-kind').textContent()} | ${await dialog.getByRole('heading', { level: 2 }).textContent()}`;
          if (shown.startsWith('On the Restate cluster') && shown.includes('| Approval: tool call |')) {
            await dialog.getByText('Show step trace').click();
            traceSays = await dialog.locator('.step-trace [role="alert"]').textContent({ timeout: 10_000 }).catch(() => null);
          }
          answered.push(shown);
          await dialog.locator('.modal-actions .primary').click();
        }
        return ended() !== undefined;
      },
      'the run to end',
      200,
    );
    expect(traceSays).toBe("This run's events are in the data dir of the worker that drives it, not in this desk's.");
    const clusterAnswered = answered.filter((shown) => shown.startsWith(`On the Restate cluster: Run ${runId.slice(0, 8)}`));
    // None shown again once answered.
    expect(new Set(clusterAnswered).size).toBe(clusterAnswered.length);
    expect(answered.some((shown) => shown.startsWith('Run ') && shown.includes('| Approval: plan |'))).toBe(true);
    expect(ended()?.run).toMatchObject({ id: runId, status: 'completed' });
    expect(clusterAnswered.map((shown) => shown.split(' | ')[1])).toEqual(expect.arrayContaining(['Approval: plan', 'Approval: tool call']));
    expect(readFileSync(join(workspace, 'ledger.txt'), 'utf8')).toBe('marked\n');
    const resolved = eventsIn(workerDir, runId).flatMap((event) => (event.type === 'approval.resolved' ? [`${event.status} by ${event.decidedBy} on ${event.channel}`] : []));
    expect(resolved).toEqual(clusterAnswered.map(() => 'approved by operator on cluster'));
    expect(await page.getByRole('alert').allTextContents()).toEqual([]);

    // The Inbox lists the run as the cluster does, though this desk's data dir has none of it.
    const onTheCluster = page.getByRole('region', { name: 'On the cluster' }).getByRole('list', { name: 'Runs on the cluster' }).getByRole('listitem');
    await onTheCluster.filter({ hasText: `completed · sent with --detach · run ${runId.slice(0, 8)}` }).waitFor();
    expect(await onTheCluster.getByRole('heading', { level: 3 }).allTextContents()).toEqual(['append a mark to the ledger']);
    // What it did, in the words archon follow prints, as its worker sent it to the cluster: every event the worker's data dir holds that has words.
    const showEvents = page.getByRole('button', { name: `Events of run ${runId.slice(0, 8)}: append a mark to the ledger` });
    await showEvents.click();
    const shownEvents = page.getByRole('list', { name: `Events of run ${runId.slice(0, 8)}` }).getByRole('listitem');
    await shownEvents.filter({ hasText: '✓ mark' }).waitFor();
    expect(await shownEvents.allTextContents()).toEqual(eventsIn(workerDir, runId).flatMap((event) => describeEvent(event) ?? []));
    expect(await showEvents.getAttribute('aria-expanded')).toBe('true');
    expect(await axeViolations(page)).toEqual([]);

    // The cluster gone: the Inbox says its approvals cannot be read, once, and raises no error.
    await cluster.close();
    const problem = page.getByRole('region', { name: 'Inbox' }).getByRole('status').filter({ hasText: 'The approvals waiting on the cluster could not be read:' });
    await problem.waitFor();
    expect(await problem.textContent()).toMatch(/^The approvals waiting on the cluster could not be read: No Restate server answers at http:\/\/127\.0\.0\.1:\d+\/query\. Start one \(npx restate-server\), or set the address of yours in Settings → Engine\.$/);
    expect(await page.getByRole('alert').count()).toBe(0);
  });

  it('a run on the cluster stopped from the Inbox: its worker stops it and kills its command, and the Inbox lists it stopped, with no Stop left', async () => {
    const { cluster, secretFile, workspace, workerDir, deskDir } = await clusterWithDesk();
    const marker = `archon-app-stop-${randomUUID()}`;
    const waiting = `until [ -e go ]; do sleep 0.1; done; echo mark >> ledger.txt # ${marker}`;
    const model = await serveModel({ reply: (request) => (request.purpose === 'plan' || request.purpose === 'final' || request.body.messages?.at(-1)?.role === 'tool' ? appendMark(request) : { toolCalls: [{ name: 'run_command', arguments: { command: waiting } }] }) });
    const clusterFlags = ['--restate-ingress', cluster.ingress, '--restate-admin', cluster.admin, '--cluster-secret-file', secretFile];
    const sent = await spawnArchon(['run', 'append a mark to the ledger', '--engine', 'restate', '--detach', '--approve', 'auto', '--model-url', model.url, '--workspace', workspace, '--json', ...clusterFlags]).done;
    expect(sent.status, sent.stderr).toBe(0);
    const { runId } = JSON.parse(sent.stdout) as { runId: string };
    await until(() => processesMatching(marker).length > 0, "the run's command to start", 120);

    const page = await openDesk(deskDir, workspace, model.url);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('button', { name: 'Inbox', exact: true }).click();
    const entry = page.getByRole('region', { name: 'On the cluster' }).getByRole('listitem').filter({ hasText: `run ${runId.slice(0, 8)}` });
    await entry.filter({ hasText: 'under way · sent with --detach' }).waitFor();
    const stop = page.getByRole('button', { name: `Stop run ${runId.slice(0, 8)} on the cluster: append a mark to the ledger` });
    expect(await axeViolations(page)).toEqual([]);
    await stop.click();

    await entry.filter({ hasText: `stopped · sent with --detach · run ${runId.slice(0, 8)}` }).waitFor({ timeout: 60_000 });
    expect(await stop.count()).toBe(0);
    expect(processesMatching(marker)).toEqual([]);
    expect(eventsIn(workerDir, runId).flatMap((event) => (event.type === 'run.stopped' ? [event.reason] : []))).toEqual([expect.stringContaining('Stopped by the operator (Stop in the app)')]);
    expect(await page.getByRole('alert').allTextContents()).toEqual([]);
  });
});
