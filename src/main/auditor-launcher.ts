import type { AuditorProcess } from '../core/audit/auditor-supervisor';
import type { ToAuditor } from '../shared/auditor-protocol';
import { utilityChannel, type UtilityFork } from './utility-channel';

/** The auditor in the app: a utility process of its own, started by path (main never imports the auditor). */
export function forkAuditorUtility(fork: UtilityFork, entry: string, dataDir: string): AuditorProcess {
  const child = fork(entry, [dataDir], { serviceName: 'Archon auditor', stdio: 'inherit' });
  return { pid: child.pid, ...utilityChannel<unknown, ToAuditor>(child, (raw) => raw) };
}
