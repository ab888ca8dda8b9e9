import type { AuditReport, VerifyResult } from '../../../../shared/schemas/audit';
import type { SliceContext } from '../../store/slice';

export interface AuditSlice {
  report: AuditReport | null;
  verification: VerifyResult | null;
  loadReport(scope: { runId?: string; day?: string }): Promise<void>;
  verifyLog(): Promise<void>;
  /** Opens a finding's run in the Runs view and, given one of its events, the step that event is about. */
  openEvidence(runId: string, eventSeq: number | null): Promise<void>;
}

export function createAuditSlice({ set, get, client, attempt }: SliceContext): AuditSlice {
  return {
    report: null,
    verification: null,
    loadReport: (scope) =>
      attempt(async () => {
        set({ report: await client.commands['audit.report'](scope) });
      }),
    verifyLog: () => attempt(async () => set({ verification: await client.commands['audit.verify']() })),
    openEvidence: async (runId, eventSeq) => {
      get().setView('runs');
      await get().selectRun(runId);
      const event = get().detail?.events.find((candidate) => candidate.seq === eventSeq);
      if (event && 'stepId' in event && typeof event.stepId === 'string') get().selectStep(event.stepId);
    },
  };
}
