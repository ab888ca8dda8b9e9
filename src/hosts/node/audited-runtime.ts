import { Auditor } from '../../auditor/auditor';
import { AuditorClient } from '../../core/audit/auditor-client';
import { supervisedAuditorClient } from '../../core/audit/auditor-supervisor';
import { resolveDataDir } from '../../core/data-dir';
import { EventBus } from '../../core/events/event-bus';
import { createRuntime, type ArchonRuntime } from '../../core/runtime';
import { forkAuditor } from './auditor-launcher';

export interface AuditedRuntime {
  runtime: ArchonRuntime;
  auditor: AuditorClient;
  /** Flushes and closes the runtime, then drains the auditor: it records every committed event before the host exits. */
  close(): Promise<void>;
}

/**
 * The runtime with the independent auditor in a process of its own, following archon.db, restarted
 * when it dies (runs pause when it cannot be kept). Throws
 * (AUDIT_RESET_REQUIRED, exit 2) when the auditor cannot vouch for the log: no run starts then.
 */
export async function openAuditedRuntime(dataDirFlag: string | undefined): Promise<AuditedRuntime> {
  const dataDir = resolveDataDir(dataDirFlag);
  const runtime = createRuntime({ dataDir });
  const { client: auditor } = supervisedAuditorClient(() => forkAuditor(dataDir), runtime, (message) => {
    runtime.log.error({ auditor: message }, 'the auditor reported a problem');
    process.stderr.write(`archon: ${message}\n`);
  });
  const close = async () => {
    try {
      runtime.close();
    } finally {
      // Even when the last events could not be written (a full disk): an undrained auditor keeps the process alive.
      await auditor.drain();
    }
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

/**
 * After a command that starts no run but changes what the auditor records (`archon estop`): the
 * auditor catches up once. The change is already durable in archon.db; a refusal only says so.
 */
export async function catchUpAudit(dataDirFlag: string | undefined): Promise<void> {
  const auditor = new AuditorClient(forkAuditor(resolveDataDir(dataDirFlag)), new EventBus());
  const state = await auditor.started();
  if (state.kind === 'refused') process.stderr.write(`archon: not audited yet: ${state.problem}. Run \`archon audit reset --acknowledge "<reason>"\`; the auditor then records it.\n`);
  await auditor.drain();
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
