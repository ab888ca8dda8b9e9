import { afterEach } from 'vitest';
import type { RunOptions } from '../../src/shared/schemas/run';
import { approveAll, type ApprovalChannel } from '../../src/core/approval/approval-channel';
import { resumeRun, startRun, type RunEngineDependencies, type RunResult } from '../../src/core/agent/run-engine';
import { modelConnector } from '../../src/core/model/connect';
import { runCapabilities } from '../../src/core/capabilities';
import type { RunCapability } from '../../src/core/run/run-context';
import type { ArchonRuntime } from '../../src/core/runtime';
import type { ToolRegistry } from '../../src/core/tools/tool-registry';
import { builtinTools } from '../../src/core/tools/builtin-tools';
import type { RunEvent } from '../../src/shared/schemas/events';
import { startModelServer, type ModelServerOptions, type ScriptedModelServer } from '../kit/scripted-model-server';
import { useRuntimes } from './runtime';
import { useTempDirs } from './temp-dir';
import { usePools } from './tools';

export interface EngineHarness {
  runtime: ArchonRuntime;
  server: ScriptedModelServer;
  events: RunEvent[];
  /** The folder the run's file tools work in. */
  workspace: string;
  run(goal: string, options?: Partial<RunOptions>, signal?: AbortSignal): Promise<RunResult>;
  resume(runId: string, signal?: AbortSignal): Promise<RunResult>;
}

/** A runtime on a fresh data dir, a scripted model server, and the engine wired between them. */
export function useEngine(): (server: ModelServerOptions, extra?: { tools?: (builtin: ToolRegistry) => ToolRegistry; approvals?: ApprovalChannel; expiryMs?: RunEngineDependencies['expiryMs']; memory?: boolean; modelPrices?: RunEngineDependencies['modelPrices']; capabilities?: readonly RunCapability[]; replicate?: RunEngineDependencies['replicate'] }) => Promise<EngineHarness> {
  const openRuntime = useRuntimes();
  const tempDir = useTempDirs();
  const openPool = usePools();
  const servers: ScriptedModelServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  return async (serverOptions, extra = {}) => {
    const server = await startModelServer(serverOptions);
    servers.push(server);
    const runtime = openRuntime();
    const events: RunEvent[] = [];
    runtime.bus.subscribe((event) => {
      if ('runId' in event) events.push(event);
    });
    const workspace = tempDir();
    const builtin = builtinTools(openPool(workspace));
    const registry = extra.tools ? extra.tools(builtin) : builtin;
    const dependencies = {
      runs: runtime.store.runs,
      events: runtime.events,
      tools: () => registry,
      approvals: extra.approvals ?? approveAll,
      expiryMs: extra.expiryMs,
      memory: extra.memory ? runtime.store.memory : undefined,
      modelPrices: extra.modelPrices,
      replicate: extra.replicate,
      capabilities: (options: RunOptions) => [...(extra.capabilities ?? []), ...runCapabilities(options)],
      connect: modelConnector({ retry: { windowMs: 150, baseDelayMs: 10, maxDelayMs: 50, firstByteTimeoutMs: 10_000, idleTimeoutMs: 10_000 } }),
    };
    const defaults: RunOptions = { modelUrl: server.url, model: '', policy: 'balanced', concurrency: null, maxTokens: null, maxCostUsd: null, workspace, maxIterations: 10, verification: 'checks', repairBudget: 2, maxReplans: 3 };
    return {
      runtime,
      server,
      events,
      workspace,
      run: (goal, options = {}, signal = new AbortController().signal) => startRun(dependencies, goal, { ...defaults, ...options }, signal),
      resume: (runId, signal = new AbortController().signal) => resumeRun(dependencies, runId, {}, signal),
    };
  };
}
