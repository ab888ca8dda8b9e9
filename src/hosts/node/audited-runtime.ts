import { loadAuditSecrets } from '../../auditor/audit-key';
import { AuditLog } from '../../auditor/audit-log';
import { buildReport } from '../../auditor/audit-report';
import type { AuditPort } from '../../core/command-handlers';
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
  const runtime = createRuntime({ dataDir });
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

/** The auditor as the app's Audit view reads it. */
export function auditPort(audit: AuditLog): AuditPort {
  return { report: (scope) => buildReport(audit, scope), verify: () => audit.verify() };
}

export function openAuditLog(dataDirFlag: string | undefined): AuditLog {
  const dataDir = resolveDataDir(dataDirFlag);
  return AuditLog.open(dataDir, loadAuditSecrets(dataDir));
}
