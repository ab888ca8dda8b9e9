import type { EndpointProbe } from '../../../../shared/schemas/endpoint';
import type { SliceContext } from '../../store/slice';

export interface ComposerSlice {
  probe: EndpointProbe | null;
  probing: boolean;
  /** With `apiKey`, the key is saved for that server's origin only. */
  probeEndpoint(modelUrl: string, model?: string, apiKey?: string): Promise<EndpointProbe | null>;
}

export function createComposerSlice({ set, client }: SliceContext): ComposerSlice {
  return {
    probe: null,
    probing: false,
    async probeEndpoint(modelUrl, model, apiKey) {
      set({ probing: true, probe: null });
      try {
        const probe = await client.commands['endpoint.probe']({ modelUrl, ...(model ? { model } : {}), ...(apiKey ? { apiKey } : {}) });
        set({ probe });
        return probe;
      } catch (error) {
        set({ error: error instanceof Error ? error.message : String(error) });
        return null;
      } finally {
        set({ probing: false });
      }
    },
  };
}
