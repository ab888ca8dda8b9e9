import { isAbsolute } from 'node:path';
import { answerShownClusterApproval, pendingClusterApprovals } from './restate/cluster-approvals';
import { clusterSecret, RestateCluster, SETTINGS_SECRET_FIELD } from './restate/restate-cluster';
import { readRunLog, stopHeldRun } from './restate/run-log';
import { listClusterRuns, listSchedules, newScheduleId, removeSchedule, setSchedule } from './restate/run-service';
import { checkCron } from './schedule/cron';
import { ArchonError } from '../shared/errors';
import type { CommandHandlers } from '../shared/ipc/dispatch';
import type { AuditReport, VerifyResult } from '../shared/schemas/audit';
import { maskMcpSecrets, unmaskMcpServer, unmaskMcpServers } from '../shared/mcp-secret-mask';
import type { EndpointProbe } from '../shared/schemas/endpoint';
import type { McpProbe } from '../shared/schemas/mcp-probe';
import type { RunOptions } from '../shared/schemas/run';
import type { McpServerConfig } from '../shared/schemas/settings';
import { requestRunControl, withDriving } from './agent/run-control';
import type { RunManager } from './agent/run-manager';
import type { PendingApprovals } from './approval/pending-approvals';
import { requireOperator, type OperatorConfirmation } from './authority/operator-authority';
import { wideningOf, type WideningRequest } from './authority/widening-changes';
import type { ArchonRuntime } from './runtime';
import type { ApiKeys } from './secrets/api-keys';
import type { McpSecrets } from './secrets/mcp-secrets';
import type { EmergencyStop } from './stop/emergency-stop';
import type { ModelDownloads } from './models/model-downloads';
import type { ModelLibrary } from './models/model-library';
import { previewUndo, revertRun } from './undo/run-undo';
import { type UndoWorkers } from './tools/file-restorer';

/** The auditor as the UI may use it: read its reports, check its log. The host provides it; the runtime cannot reach it. */
export interface AuditPort {
  report(scope: { runId: string } | { day: string }): Promise<AuditReport>;
  verify(): Promise<VerifyResult>;
  /** Throws when the auditor cannot vouch for the log (or is not following it): no run may start then. */
  assertReady(): void;
}

export interface CommandDependencies {
  runtime: ArchonRuntime;
  manager: RunManager;
  estop: EmergencyStop;
  approvals: PendingApprovals;
  audit: AuditPort;
  apiKeys: Pick<ApiKeys, 'save'>;
  /** Seals MCP servers' env and headers before Settings store them, and opens them to start a server. */
  mcpSecrets: Pick<McpSecrets, 'seal' | 'open'>;
  /** Asked, outside the renderer, before any change that widens what agents may do. */
  confirmation: OperatorConfirmation;
  probe(modelUrl: string, model: string | undefined, signal: AbortSignal): Promise<EndpointProbe>;
  /** Starts one MCP server, lists its tools and stops it again. */
  probeMcp(name: string, config: McpServerConfig, signal: AbortSignal): Promise<McpProbe>;
  runDefaults(): RunOptions;
  /** The tool processes undo reverts files through. */
  undoWorkers: UndoWorkers;
  /** The model library and the downloads into it. */
  models: { library: Pick<ModelLibrary, 'add' | 'remove'>; downloads: ModelDownloads };
  info: { version: string; dataDir: string; host: 'electron' | 'headless'; hostFlags: (keyof RunOptions)[]; keyStorageNote: string | null };
}

/** A list the page shows (some every few seconds) says soon that the cluster is out of reach or hung, rather than wait for it to restart. */
const PAGE_LIST_DEADLINE_MS = 3000;

/** Whatever a task that the signal ended threw, it ends with the signal's reason: the stop (or the caller) ended it, not its own fault. */
async function endedBy<T>(signal: AbortSignal, task: Promise<T>): Promise<T> {
  try {
    return await task;
  } catch (error) {
    signal.throwIfAborted();
    throw error;
  }
}

/** A file the page names is on the host: only a whole path says which one, whatever the host's working folder. */
function localModelFile(path: string): string {
  if (!isAbsolute(path)) throw new ArchonError('VALIDATION_FAILED', `${path} is not a full path: give the whole path of the .gguf file.`);
  if (!path.toLowerCase().endsWith('.gguf')) throw new ArchonError('VALIDATION_FAILED', `${path} is not a .gguf file: give the path of a GGUF model file (llama.cpp's format).`);
  return path;
}

/**
 * The runtime's side of the contract; Electron main and the headless host bind these same handlers.
 * Each command's signal fires on the emergency stop; a long one runs under `estop.taskSignal`, so a
 * latched stop refuses it and a stop ends it.
 */
export function createCommandHandlers(deps: CommandDependencies): CommandHandlers {
  const { store } = deps.runtime;
  const underStop = async <T>(signal: AbortSignal, task: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const taskSignal = deps.estop.taskSignal(signal);
    return endedBy(taskSignal, task(taskSignal));
  };
  const confirm = (request: WideningRequest, signal: AbortSignal) => {
    const { title, changes } = wideningOf(request);
    return endedBy(signal, requireOperator(deps.confirmation, title, changes, signal));
  };
  /** The cluster of Settings; `purpose` says what the operator sets one for. */
  const clusterSetting = (purpose: string) => {
    const setting = store.getSettings().cluster;
    if (!setting) throw new ArchonError('CONFIG_INVALID', `No Restate cluster is set in Settings → Engine: set one ${purpose}.`);
    return setting;
  };
  /** The same with its secret, for what the desk signs. */
  const signedCluster = (purpose: string) => {
    const setting = clusterSetting(purpose);
    return { cluster: new RestateCluster(setting), secret: clusterSecret(setting.secretFile, deps.runDefaults().workspace, SETTINGS_SECRET_FIELD) };
  };
  return {
    'app.info': async () => {
      const { modelUrl, model, policy, workspace } = deps.runDefaults();
      return { ...deps.info, runDefaults: { modelUrl, model, policy, workspace } };
    },
    'runs.list': async ({ limit }) => store.runs.listRuns(limit).map((summary) => withDriving(store.runs, summary)),
    'inbox.list': async ({ limit }) => store.runs.inbox(limit),
    'schedules.list': async (_input, { signal }) => listSchedules(new RestateCluster(clusterSetting('to keep schedules there'), PAGE_LIST_DEADLINE_MS), signal),
    'schedules.add': async ({ id, ...schedule }, { signal }) => {
      checkCron(schedule.cron);
      const { cluster, secret } = signedCluster('to keep schedules there');
      await confirm({ kind: 'schedule', defaults: deps.runDefaults(), schedule }, signal);
      return setSchedule(cluster, secret, id ?? newScheduleId(), schedule, signal);
    },
    'schedules.remove': async ({ id }, { signal }) => {
      const { cluster, secret } = signedCluster('to keep schedules there');
      return { removed: await removeSchedule(cluster, secret, id, signal) };
    },
    'clusterRuns.list': async (_input, { signal }) => {
      const setting = store.getSettings().cluster;
      return setting ? listClusterRuns(new RestateCluster(setting, PAGE_LIST_DEADLINE_MS), signal) : [];
    },
    'clusterRuns.events': async ({ runId, afterSeq }, { signal }) => {
      const setting = store.getSettings().cluster;
      return setting ? readRunLog(new RestateCluster(setting, PAGE_LIST_DEADLINE_MS), runId, afterSeq, signal) : [];
    },
    'clusterRuns.stop': async ({ runId }, { signal }) => {
      const { cluster, secret } = signedCluster('to stop its runs');
      return { held: await stopHeldRun(cluster, secret, runId, 'the operator (Stop in the app)', signal) };
    },
    'clusterApprovals.list': async (_input, { signal }) => {
      const setting = store.getSettings().cluster;
      return setting ? (await pendingClusterApprovals(new RestateCluster(setting, PAGE_LIST_DEADLINE_MS), signal)).map((pending) => pending.request) : [];
    },
    'clusterApprovals.decide': async ({ decision, ...shown }, { signal }) => {
      const { cluster, secret } = signedCluster('to answer the approvals of its runs');
      await answerShownClusterApproval(cluster, secret, shown, decision, signal);
      return { accepted: true as const };
    },
    'estop.status': async () => store.estopState(),
    'host.confirmations': async () => deps.confirmation.waiting?.() ?? [],
    'estop.trigger': async ({ reason }) => deps.estop.trigger('operator', reason),
    'estop.reset': async () => deps.estop.reset(),
    'settings.get': async () => maskMcpSecrets(store.getSettings()),
    'settings.update': async (masked, { signal }) => {
      const current = store.getSettings();
      const patch = masked.mcpServers ? { ...masked, mcpServers: unmaskMcpServers(masked.mcpServers, current.mcpServers) } : masked;
      // A cluster whose secret cannot be read is refused now, not at the first run that needs it.
      if (patch.cluster) clusterSecret(patch.cluster.secretFile, deps.runDefaults().workspace, SETTINGS_SECRET_FIELD);
      await confirm({ kind: 'settings', current, patch }, signal);
      return maskMcpSecrets(store.updateSettings(patch.mcpServers ? { ...patch, mcpServers: deps.mcpSecrets.seal(patch.mcpServers) } : patch));
    },
    'runs.start': async ({ apiKey, ...input }, { signal }) => {
      deps.audit.assertReady();
      const defaults = deps.runDefaults();
      await confirm({ kind: 'run', defaults, input }, signal);
      if (apiKey) deps.apiKeys.save(input.modelUrl ?? defaults.modelUrl, apiKey);
      return deps.manager.start(input, signal);
    },
    'runs.get': async ({ runId }) => deps.manager.detail(runId),
    'runs.resume': async ({ runId }) => {
      deps.audit.assertReady();
      return deps.manager.resume(runId);
    },
    'runs.undoPreview': async ({ runId }) => previewUndo(store.runs, runId),
    'runs.undo': async ({ runId }, { signal }) => {
      if (deps.manager.isActive(runId)) throw new ArchonError('VALIDATION_FAILED', 'This run is still going: stop it first, then undo its file changes.');
      return underStop(signal, (taskSignal) => revertRun(store.runs, runId, deps.undoWorkers, deps.runtime.now, taskSignal));
    },
    'runs.stop': async ({ runId }) => requestRunControl(store.runs, runId, 'stop', 'the operator (Stop run in the app)'),
    'runs.pause': async ({ runId }) => requestRunControl(store.runs, runId, 'pause', 'the operator (Pause run in the app)'),
    'runs.delete': async ({ runId }) => {
      await deps.manager.delete(runId);
      return { deleted: true as const };
    },
    'approvals.list': async () => deps.approvals.list(),
    'approvals.decide': async ({ approvalId, actionHash, decision }) => {
      deps.approvals.answer(approvalId, actionHash, decision);
      return { accepted: true as const };
    },
    'endpoint.probe': ({ modelUrl, model, apiKey }, { signal }) =>
      underStop(signal, async (taskSignal) => {
        if (apiKey) deps.apiKeys.save(modelUrl, apiKey);
        return deps.probe(modelUrl, model, taskSignal);
      }),
    'audit.report': ({ runId, day }) => deps.audit.report(runId ? { runId } : { day: day ?? new Date().toISOString().slice(0, 10) }),
    'audit.verify': () => deps.audit.verify(),
    'memory.list': async ({ kind, query, limit }) => {
      if (!query) return store.memory.list({ kind, limit });
      return store.memory.search(query, { limit, kinds: kind ? [kind] : undefined, recentFallback: false }).map((found) => found.item);
    },
    'memory.get': async ({ ids }) => ids.flatMap((id) => store.memory.get(id) ?? []),
    'memory.update': async ({ id, text, pinned, global }) => {
      const fullId = store.memory.resolveId(id);
      let item = store.memory.get(fullId);
      if (text !== undefined) item = store.memory.update(fullId, text);
      if (pinned !== undefined) item = store.memory.pin(fullId, pinned);
      if (global !== undefined) item = store.memory.setGlobal(fullId, global);
      if (!item) throw new ArchonError('NOT_FOUND', `There is no memory ${id}.`);
      return item;
    },
    'memory.forget': async ({ id }) => {
      store.memory.forget(store.memory.resolveId(id));
      return { forgotten: true as const };
    },
    'models.list': async () => deps.models.downloads.list(),
    'models.pull': async ({ name }) => {
      deps.models.downloads.pull(name, deps.estop.taskSignal());
      return { started: true as const };
    },
    'models.cancel': async ({ name }) => {
      deps.models.downloads.cancel(name);
      return { cancelled: true as const };
    },
    'models.remove': async ({ name }) => {
      if (deps.models.downloads.isDownloading(name)) throw new ArchonError('VALIDATION_FAILED', `${name} is downloading: cancel its download first, then remove it.`);
      deps.models.library.remove(name);
      return { removed: true as const };
    },
    'models.add': async ({ path }) => deps.models.library.add(localModelFile(path)),
    'mcp.probe': ({ name, config: masked }, { signal }) =>
      underStop(signal, async (taskSignal) => {
        const current = store.getSettings();
        const config = unmaskMcpServer(name, masked, current.mcpServers);
        await confirm({ kind: 'mcp-test', current, name, config }, taskSignal);
        const opened = deps.mcpSecrets.open(name, config);
        return opened.ok ? deps.probeMcp(name, opened.config, taskSignal) : { ok: false as const, failure: opened.failure };
      }),
  };
}
