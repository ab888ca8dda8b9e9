import { fileURLToPath } from 'node:url';
import packageJson from '../../../package.json' with { type: 'json' };
import { createAppServices } from '../../core/app-services';
import { busAnnouncer } from '../../core/authority/confirmation-announcer';
import type { ArchonRuntime } from '../../core/runtime';
import { apiKeyFromCommandLine } from '../../core/secrets/api-key-source';
import { ApiKeys } from '../../core/secrets/api-keys';
import { resolveModelUrl } from '../../shared/model-presets';
import { openAuditedRuntime } from './audited-runtime';
import { engineLauncher } from './engine-launcher';
import type { RunFlags } from './command-flags';
import { startHeadlessHost } from './headless-host';
import { givenRunOptions, nodeWorkers } from './run-command';
import { terminalConfirmation } from './terminal-confirmation';

/** The built renderer beside this CLI bundle (out/renderer). */
const RENDERER_DIR = fileURLToPath(new URL('../renderer', import.meta.url));

export type ServeFlags = { dataDir?: string } & RunFlags & { port: number; trustUi?: boolean };

/** The key given at start, bound to the origin of the model server the host was started for. */
function serveApiKeys(runtime: ArchonRuntime, flags: ServeFlags, runDefaults: { modelUrl?: string }): ApiKeys {
  const apiKeys = new ApiKeys(runtime.store.secrets);
  const key = apiKeyFromCommandLine(flags, runtime.store.secrets);
  if (key) apiKeys.remember(runDefaults.modelUrl ?? resolveModelUrl(runtime.store.getSettings().modelUrl), key);
  return apiKeys;
}

export async function serve(flags: ServeFlags): Promise<void> {
  const audited = await openAuditedRuntime(flags.dataDir);
  try {
    const { runtime } = audited;
    const { launcher, entry, readableRoots, hiddenFolders } = nodeWorkers(runtime);
    // Only the run settings given on the command line; the rest come from Settings at each run.
    const runDefaults = givenRunOptions(flags);
    const services = createAppServices({
      runtime,
      host: 'headless',
      version: packageJson.version,
      audit: audited.auditor,
      launcher,
      executorEntry: entry,
      readableRoots,
      apiKeys: serveApiKeys(runtime, flags, runDefaults),
      confirmation: terminalConfirmation({ trustUi: flags.trustUi ?? false, announcer: busAnnouncer(runtime.bus, 'terminal') }),
      hiddenFolders,
      allowNetwork: flags.allowNetwork,
      runDefaults,
      engineLauncher: engineLauncher(),
    });
    const host = await startHeadlessHost({ handlers: services.handlers, stop: services.estop, bus: runtime.bus, rendererDir: RENDERER_DIR, port: flags.port });
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
