import { Auditor } from '../../auditor/auditor';
import { AuditorClient } from '../../core/audit/auditor-client';
import { resolveDataDir } from '../../core/data-dir';
import { createRuntime, type ArchonRuntime } from '../../core/runtime';
import { forkAuditor } from './auditor-launcher';

export interface AuditedRuntime {
  runtime: ArchonRuntime;
  auditor: AuditorClient;
  /** Flushes and closes the runtime, then drains the auditor: it records every committed event before the host exits. */
  close(): Promise<void>;
}

/**
 * The runtime with the independent auditor in a process of its own, following archon.db. Throws
 * (AUDIT_RESET_REQUIRED, exit 2) when the auditor cannot vouch for the log: no run starts then.
 */
export async function openAuditedRuntime(dataDirFlag: string | undefined): Promise<AuditedRuntime> {
  const dataDir = resolveDataDir(dataDirFlag);
  const runtime = createRuntime({ dataDir });
  const auditor = new AuditorClient(forkAuditor(dataDir), runtime.bus, (message) => process.stderr.write(`archon: ${message}\n`));
  const close = async () => {
    runtime.close();
    await auditor.drain();
  };
  await auditor.started();
  try {
    auditor.assertReady();
  } catch (error) {
    await close();
    throw error;
  }
  return { runtime, auditor, close };
}

/** The auditor's log as `archon audit verify` and `report` read it: read-only, creating nothing. */
export function inspectAudit<T>(dataDirFlag: string | undefined, use: (auditor: Auditor) => T): T {
  const auditor = Auditor.inspect(resolveDataDir(dataDirFlag));
  try {
    return use(auditor);
  } finally {
    auditor.close();
  }
}
