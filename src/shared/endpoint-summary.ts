import type { EndpointProbe } from './schemas/endpoint';

/** What the probe found, in one line for the CLI and the app: mode, context and its source, parallel slots. */
export function endpointSummary(probe: Pick<EndpointProbe, 'toolCalling' | 'streaming' | 'contextLength' | 'contextSource' | 'parallelSlots'>): string {
  const mode = probe.toolCalling ? `native tool calls, ${probe.streaming ? 'streamed' : 'sent whole (not streamed)'}` : 'text protocol';
  const context = probe.contextLength === null ? 'context unknown' : `context ${probe.contextLength} tokens (${probe.contextSource ?? 'reported'})`;
  return `${mode}; ${context}; parallel slots ${probe.parallelSlots ?? 'unknown'}`;
}
