import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterEach } from 'vitest';
import { actionHash } from '../../src/core/approval/approval-gate';
import { startHeadlessHost, type HeadlessHost } from '../../src/hosts/node/headless-host';
import type { ApprovalDecision, ApprovalKind, ExplanationPacket } from '../../src/shared/schemas/approval';
import type { PlanStep } from '../../src/shared/schemas/plan';
import { RunOptionsSchema, type RunStatus } from '../../src/shared/schemas/run';
import { useBrowser } from './browser';
import { PROJECT_ROOT } from './built';
import type { ArchonRuntime } from '../../src/core/runtime';
import { useServices } from './runtime';
import { useTempDirs } from './temp-dir';

/** What one approval asks, as the approval gate would put it. */
export interface AskedApproval {
  kind: ApprovalKind;
  stepId: string | null;
  summary: string;
  action: unknown;
  explanation: ExplanationPacket;
}

export interface ServedApp {
  page: Page;
  runtime: ArchonRuntime;
  /** A run in the store as a run would leave it: its goal, plan and status (and answer). */
  createRun(goal: string, status: RunStatus, stored?: { answer?: string; plan?: PlanStep[] }): string;
  /** Asks as the approval gate does: the request waits with the operator's channel, and its event tells the page. */
  ask(runId: string, approval: AskedApproval): Promise<ApprovalDecision>;
  open(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The app in Chromium, served by the headless host in this process over real services, so a test can
 * store runs, announce their events and ask approvals the page answers; all of it closed after each test.
 */
export function useServedApp(): () => Promise<ServedApp> {
  const openServices = useServices();
  const launchBrowser = useBrowser();
  const tempDir = useTempDirs();
  const hosts: HeadlessHost[] = [];
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.close();
  });
  return async () => {
    const { runtime, services } = openServices();
    const host = await startHeadlessHost({ handlers: services.handlers, stop: services.estop, bus: runtime.bus, rendererDir: `${PROJECT_ROOT}out/renderer`, port: 0 });
    hosts.push(host);
    const createRun: ServedApp['createRun'] = (goal, status, { answer, plan } = {}) => {
      const id = randomUUID();
      const now = new Date().toISOString();
      const options = RunOptionsSchema.parse({ modelUrl: 'http://127.0.0.1:9/v1', model: 'scripted', policy: 'balanced', concurrency: null, maxTokens: null, maxCostUsd: null, workspace: tempDir(), maxIterations: 5 });
      runtime.store.runs.createRun({ id, goal, policy: 'balanced', options, now });
      if (plan) runtime.store.runs.savePlan(id, plan);
      runtime.store.runs.setRunStatus(id, status, now, answer ? { answer } : {});
      return id;
    };
    const ask: ServedApp['ask'] = (runId, { kind, stepId, summary, action, explanation }) => {
      const id = randomUUID();
      const hash = actionHash(action);
      const decided = services.approvals.decide({ id, runId, stepId, kind, summary, action, actionHash: hash, explanation, requestedAt: new Date().toISOString(), expiresAt: null }, { signal: new AbortController().signal });
      runtime.events.append(runId, 'approval.requested', { approvalId: id, kind, stepId, summary, action, actionHash: hash, expiresAt: null, explanation });
      runtime.events.flush();
      return decided;
    };
    const context = await (await launchBrowser()).newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    // These tests assert order and outcome; the waits are only long enough for a loaded 2-core machine running the whole suite.
    page.setDefaultTimeout(60_000);
    const open = async () => {
      await page.goto(host.url);
      await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
    };
    return { page, runtime, createRun, ask, open, close: () => context.close() };
  };
}
