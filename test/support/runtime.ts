import { afterEach } from 'vitest';
import { Auditor } from '../../src/auditor/auditor';
import { foldersHiddenFromTools } from '../../src/core/tools/hidden-folders';
import { createAppServices, type AppServices } from '../../src/core/app-services';
import { childProcessLauncher } from '../../src/core/process/child-process-launcher';
import { createRuntime, type ArchonRuntime } from '../../src/core/runtime';
import { ApiKeys } from '../../src/core/secrets/api-keys';
import { PROJECT_ROOT } from './built';
import { useTempDirs } from './temp-dir';

/** A runtime over a fresh data dir, closed after the test. */
export function useRuntimes(): () => ArchonRuntime {
  const tempDir = useTempDirs();
  const open: ArchonRuntime[] = [];
  afterEach(() => {
    for (const runtime of open.splice(0)) runtime.close();
  });
  return () => {
    const runtime = createRuntime({ dataDir: tempDir() });
    open.push(runtime);
    return runtime;
  };
}

/** The app's services (handlers, run manager, approvals, stop) over a fresh runtime and audit log. */
export function useServices(): () => { runtime: ArchonRuntime; services: AppServices } {
  const openRuntime = useRuntimes();
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });
  return () => {
    const runtime = openRuntime();
    // The auditor in this process (its own process is tested in test/auditor): it catches up before it answers.
    const auditor = Auditor.start(runtime.dataDir);
    const services = createAppServices({
      runtime,
      host: 'headless',
      version: '0.0.0-test',
      audit: {
        report: async (scope) => (auditor.catchUp(), auditor.report(scope)),
        verify: async () => (auditor.catchUp(), auditor.verify()),
        assertReady: () => undefined,
      },
      launcher: childProcessLauncher,
      executorEntry: `${PROJECT_ROOT}out/node/executor.js`,
      readableRoots: [PROJECT_ROOT],
      apiKeys: new ApiKeys(runtime.store.secrets),
      confirmation: { confirm: async () => false },
      hiddenFolders: foldersHiddenFromTools(runtime.dataDir),
    });
    closers.push(async () => {
      await services.close();
      auditor.close();
    });
    return { runtime, services };
  };
}
