import type { EndpointProbe } from '../../../../shared/schemas/endpoint';
import type { SliceContext } from '../../store/slice';

export interface ComposerSlice {
  probe: EndpointProbe | null;
  probing: boolean;
  /** With `apiKey`, the key is saved for that server's origin only. */
  probeEndpoint(modelUrl: string, model?: string, apiKey?: string): Promise<EndpointProbe | null>;
  /** The finished run the composer's next goal continues ("Continue" on a run), if any. */
  followUp: { runId: string; goal: string } | null;
  setFollowUp(followUp: { runId: string; goal: string } | null): void;
}

export function createComposerSlice({ set, get, client }: SliceContext): ComposerSlice {
  return {
    probe: null,
    probing: false,
    followUp: null,
    setFollowUp: (followUp) => set({ followUp }),
    async probeEndpoint(modelUrl, model, apiKey) {
      set({ probing: true, probe: null });
      try {
        const probe = await client.commands['endpoint.probe']({ modelUrl, ...(model ? { model } : {}), ...(apiKey ? { apiKey } : {}) });
        set({ probe });
        get().noteModelServer(modelUrl, null);
        return probe;
      } catch (error) {
        set({ error: error instanceof Error ? error.message : String(error) });
        get().noteModelServer(modelUrl, error);
        return null;
      } finally {
        set({ probing: false });
      }
    },
  };
}
