import packageJson from '../../../package.json' with { type: 'json' };
import { loadAuditSecrets } from '../../auditor/audit-key';
import { AuditLog } from '../../auditor/audit-log';
import { resolveDataDir } from '../../core/data-dir';
import { createRuntime, type ArchonRuntime } from '../../core/runtime';

export interface AuditedRuntime {
  runtime: ArchonRuntime;
  audit: AuditLog;
  close(): void;
}

/** The runtime with the independent auditor listening on its bus (read-only: it never publishes). */
export function openAuditedRuntime(dataDirFlag: string | undefined): AuditedRuntime {
  const dataDir = resolveDataDir(dataDirFlag);
  const runtime = createRuntime({ dataDir, version: packageJson.version, host: 'headless' });
  let audit: AuditLog;
  try {
    audit = AuditLog.open(dataDir, loadAuditSecrets(dataDir));
  } catch (error) {
    runtime.close();
    throw error;
  }
  const unsubscribe = runtime.bus.subscribe((event) => audit.record(event));
  return {
    runtime,
    audit,
    close() {
      runtime.close();
      unsubscribe();
      audit.close();
    },
  };
}

export function openAuditLog(dataDirFlag: string | undefined): AuditLog {
  const dataDir = resolveDataDir(dataDirFlag);
  return AuditLog.open(dataDir, loadAuditSecrets(dataDir));
}
