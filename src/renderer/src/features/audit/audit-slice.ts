import type { AuditReport, VerifyResult } from '../../../../shared/schemas/audit';
import type { SliceContext } from '../../store/slice';

export interface AuditSlice {
  report: AuditReport | null;
  verification: VerifyResult | null;
  loadReport(scope: { runId?: string; day?: string }): Promise<void>;
  verifyLog(): Promise<void>;
}

export function createAuditSlice({ set, client, attempt }: SliceContext): AuditSlice {
  return {
    report: null,
    verification: null,
    loadReport: (scope) => attempt(async () => set({ report: await client.commands['audit.report'](scope) })),
    verifyLog: () => attempt(async () => set({ verification: await client.commands['audit.verify']() })),
  };
}
