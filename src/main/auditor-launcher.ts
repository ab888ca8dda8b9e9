import type { AuditorChannel } from '../core/audit/auditor-client';
import type { ToAuditor } from '../shared/auditor-protocol';
import { utilityChannel, type UtilityFork } from './utility-channel';

/** The auditor in the app: a utility process of its own, started by path (main never imports the auditor). */
export function forkAuditorUtility(fork: UtilityFork, entry: string, dataDir: string): AuditorChannel {
  return utilityChannel<unknown, ToAuditor>(fork(entry, [dataDir], { serviceName: 'Archon auditor', stdio: 'inherit' }), (raw) => raw);
}
