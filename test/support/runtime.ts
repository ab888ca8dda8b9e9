import { afterEach } from 'vitest';
import { foldersHiddenFromTools, loadAuditSecrets } from '../../src/auditor/audit-key';
import { AuditLog } from '../../src/auditor/audit-log';
import { buildReport } from '../../src/auditor/audit-report';
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
    const audit = AuditLog.open(runtime.dataDir, loadAuditSecrets(runtime.dataDir));
    const services = createAppServices({
      runtime,
      host: 'headless',
      version: '0.0.0-test',
      audit: { report: (scope) => buildReport(audit, scope), verify: () => audit.verify() },
      launcher: childProcessLauncher,
      executorEntry: `${PROJECT_ROOT}out/node/executor.js`,
      readableRoots: [PROJECT_ROOT],
      apiKeys: new ApiKeys(runtime.store.secrets),
      confirmation: { confirm: async () => false },
      hiddenFolders: foldersHiddenFromTools(runtime.dataDir),
    });
    closers.push(async () => {
      await services.close();
      audit.close();
    });
    return { runtime, services };
  };
}
