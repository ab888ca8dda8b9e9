import { afterEach } from 'vitest';
import { clusterSecretFile, freePorts, startBalancer, startRestateServer, startWorker, type ArchonWorker, type RestateServer } from '../kit/restate-cluster';

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
    /** One worker per data dir, all behind one balancer whose address each registers (w1, w2, …), serving one workspace. */
    balanced: async (cluster: Pick<RestateServer, 'ingress' | 'admin'>, options: { workspace: string; secretFile: string; dataDirs: readonly string[] }) => {
      const [frontPort, ...ports] = await freePorts(options.dataDirs.length + 1);
      const front = kept(await startBalancer(frontPort as number, () => ports));
      const workers: ArchonWorker[] = [];
      for (const [index, dataDir] of options.dataDirs.entries()) workers.push(kept(await startWorker(cluster, { id: `w${index + 1}`, port: ports[index], workspace: options.workspace, dataDir, secretFile: options.secretFile, advertise: front.url })));
      return workers;
    },
    secretFile: () => {
      const secret = clusterSecretFile();
      open.push({ close: async () => secret.remove() });
      return secret.file;
    },
  };
}
