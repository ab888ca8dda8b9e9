import { afterEach } from 'vitest';
import { clusterSecretFile, startBalancer, startRestateServer, startWorker } from '../kit/restate-cluster';

export { freePorts, until, type ArchonWorker, type RestateServer } from '../kit/restate-cluster';

/** A Restate server, workers and balancers for one test, each stopped after it. */
export function useRestate() {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const part of open.splice(0).reverse()) await part.close();
  });
  const kept = <T extends { close(): Promise<void> }>(part: T): T => {
    open.push(part);
    return part;
  };
  return {
    server: async (...args: Parameters<typeof startRestateServer>) => kept(await startRestateServer(...args)),
    worker: async (...args: Parameters<typeof startWorker>) => kept(await startWorker(...args)),
    balancer: async (...args: Parameters<typeof startBalancer>) => kept(await startBalancer(...args)),
    secretFile: () => {
      const secret = clusterSecretFile();
      open.push({ close: async () => secret.remove() });
      return secret.file;
    },
  };
}
