import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import packageJson from '../../../package.json' with { type: 'json' };
import { foldersHiddenFromTools } from '../../core/tools/hidden-folders';
import { createAppServices } from '../../core/app-services';
import { childProcessLauncher } from '../../core/process/child-process-launcher';
import type { ArchonRuntime } from '../../core/runtime';
import { apiKeyFromCommandLine } from '../../core/secrets/api-key-source';
import { ApiKeys } from '../../core/secrets/api-keys';
import { resolveModelUrl } from '../../shared/model-presets';
import type { RunOptions } from '../../shared/schemas/run';
import { openAuditedRuntime } from './audited-runtime';
import type { RunFlags } from './command-flags';
import { startHeadlessHost } from './headless-host';
import { APP_ROOT, EXECUTOR_ENTRY } from './run-command';
import { terminalConfirmation } from './terminal-confirmation';

/** The built renderer beside this CLI bundle (out/renderer). */
const RENDERER_DIR = fileURLToPath(new URL('../renderer', import.meta.url));

export type ServeFlags = { dataDir?: string } & RunFlags & { port: number; trustUi?: boolean };

/** Only the run settings given on the command line; the rest come from Settings at each run. */
function serveDefaults(flags: ServeFlags): Partial<RunOptions> {
  const given: Partial<RunOptions> = {
    modelUrl: flags.modelUrl ? resolveModelUrl(flags.modelUrl) : undefined,
    model: flags.model,
    policy: flags.policy,
    concurrency: flags.concurrency,
    maxTokens: flags.maxTokens,
    maxCostUsd: flags.maxCost,
    workspace: flags.workspace ? resolve(flags.workspace) : undefined,
  };
  return Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
}

/** The key given at start, bound to the origin of the model server the host was started for. */
function serveApiKeys(runtime: ArchonRuntime, flags: ServeFlags): ApiKeys {
  const apiKeys = new ApiKeys(runtime.store.secrets);
  const key = apiKeyFromCommandLine(flags, runtime.store.secrets);
  if (key) apiKeys.remember(serveDefaults(flags).modelUrl ?? resolveModelUrl(runtime.store.getSettings().modelUrl), key);
  return apiKeys;
}

export async function serve(flags: ServeFlags): Promise<void> {
  const audited = await openAuditedRuntime(flags.dataDir);
  try {
    const { runtime } = audited;
    const services = createAppServices({
      runtime,
      host: 'headless',
      version: packageJson.version,
      audit: audited.auditor,
      launcher: childProcessLauncher,
      executorEntry: EXECUTOR_ENTRY,
      readableRoots: [APP_ROOT],
      apiKeys: serveApiKeys(runtime, flags),
      confirmation: terminalConfirmation({ trustUi: flags.trustUi ?? false }),
      hiddenFolders: foldersHiddenFromTools(runtime.dataDir),
      allowNetwork: flags.allowNetwork,
      runDefaults: serveDefaults(flags),
    });
    const host = await startHeadlessHost({ handlers: services.handlers, bus: runtime.bus, rendererDir: RENDERER_DIR, port: flags.port });
    process.stdout.write(`Archon UI: ${host.url}\n`);
    await new Promise<void>((done) => {
      process.once('SIGINT', done);
      process.once('SIGTERM', done);
    });
    await host.close();
    await services.close();
  } finally {
    await audited.close();
  }
}
