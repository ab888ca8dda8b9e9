import { planReply, startModelServer, stepIdOf, toolMessagesOf } from '../test/kit/scripted-model-server';

/*
 * The model server of the fan-out benchmark (tools.bench.ts), in a process of its own as a real
 * model server is, so that its work is not counted as Archon's. Arguments: the width and the
 * latency of every answer (ms). The plan is that many leaves, each calling the calculator once
 * between two model turns, then a join. It sends its URL when it listens; on any message it sends
 * back the step requests it saw and exits.
 */

/** A step request as the benchmark reads it: which step, and when it arrived (ms, this process's clock). */
export interface FanOutRequest {
  stepId: string | null;
  at: number;
}

const [width = 0, latencyMs = 0] = process.argv.slice(2).map(Number);
const leaves = Array.from({ length: width }, (_, index) => ({ id: `leaf${index}`, description: `part ${index}` }));
const steps = [...leaves, { id: 'join', description: 'combine the parts', dependencies: leaves.map((leaf) => leaf.id) }];
const server = await startModelServer({
  latencyMs,
  reply: (request) => {
    if (request.purpose === 'plan') return planReply(steps);
    if (request.purpose === 'step' && stepIdOf(request) !== 'join' && toolMessagesOf(request).length === 0) return { toolCalls: [{ name: 'calculator', arguments: { expression: '6 * 7' } }] };
    return { content: 'done' };
  },
});
process.send?.({ url: server.url });
process.once('message', () => {
  const seen: FanOutRequest[] = server.chatRequests.filter((request) => request.purpose === 'step').map((request) => ({ stepId: stepIdOf(request), at: request.at }));
  void server.close().then(() => process.send?.(seen, () => process.disconnect()));
});
