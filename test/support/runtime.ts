import { createRuntime, type ArchonRuntime } from '../../src/core/runtime';
import { afterEach } from 'vitest';
import { useTempDirs } from './temp-dir';

/** A runtime over a fresh data dir, closed after the test. */
export function useRuntimes(): () => ArchonRuntime {
  const tempDir = useTempDirs();
  const open: ArchonRuntime[] = [];
  afterEach(() => {
    for (const runtime of open.splice(0)) runtime.close();
  });
  return () => {
    const runtime = createRuntime({ dataDir: tempDir(), version: '0.0.0-test', host: 'headless' });
    open.push(runtime);
    return runtime;
  };
}
