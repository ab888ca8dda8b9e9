import { afterEach } from 'vitest';
import { startModelServer, type ModelServerOptions, type ScriptedModelServer } from '../kit/scripted-model-server';

/** Scripted model servers on loopback, each closed after its test. */
export function useModelServers(): (options: ModelServerOptions) => Promise<ScriptedModelServer> {
  const servers: ScriptedModelServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  return async (options) => {
    const server = await startModelServer(options);
    servers.push(server);
    return server;
  };
}
