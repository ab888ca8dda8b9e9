import { afterEach } from 'vitest';
import { childProcessLauncher } from '../../src/core/process/child-process-launcher';
import { builtinTools } from '../../src/core/tools/builtin-tools';
import type { ToolRegistry } from '../../src/core/tools/tool-registry';
import { ToolWorkerPool, type ToolWorkerPoolOptions } from '../../src/core/tools/tool-worker-pool';
import { builtFile, PROJECT_ROOT } from './built';

/** The built-in tools' definitions, for tests that only read their names and schemas (no process starts). */
export function catalogueTools(): ToolRegistry {
  return builtinTools(new ToolWorkerPool({ launcher: childProcessLauncher, entry: '/nonexistent', workspace: '/nonexistent', networkTools: false, readableRoots: null }));
}

/** Real tool pools over the built executor, closed after each test. */
export function usePools(): (workspace: string, options?: Partial<ToolWorkerPoolOptions>) => ToolWorkerPool {
  const pools: ToolWorkerPool[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.close()));
  });
  return (workspace, options = {}) => {
    const pool = new ToolWorkerPool({
      launcher: childProcessLauncher,
      entry: builtFile('node/executor.js'),
      workspace,
      networkTools: false,
      readableRoots: [PROJECT_ROOT],
      ...options,
    });
    pools.push(pool);
    return pool;
  };
}
