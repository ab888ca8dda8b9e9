import { resolve } from 'node:path';
import { defineConfig } from 'vite';

/** The Node side that runs without Electron: the `archon` CLI (and headless host) and the tool executor. */
export default defineConfig({
  // zod is bundled: loading it as hundreds of separate modules costs a tool process ~90 ms at start.
  ssr: { noExternal: ['zod'] },
  build: {
    outDir: 'out/node',
    ssr: true,
    target: 'node22',
    emptyOutDir: true,
    sourcemap: true,
    rollupOptions: {
      input: { cli: resolve('src/hosts/node/index.ts'), executor: resolve('src/executor/index.ts') },
      output: { format: 'es', entryFileNames: '[name].js' },
    },
  },
});
