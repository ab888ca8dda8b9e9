import { resolve } from 'node:path';
import { defineConfig } from 'vite';

/** The Node side that runs without Electron: the `archon` CLI (and headless host), the tool executor and the auditor. */
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
      input: { cli: resolve('src/hosts/node/index.ts'), executor: resolve('src/executor/index.ts'), auditor: resolve('src/auditor/auditor-process.ts') },
      // Chunks sit beside the entries: a module that finds a built file by `import.meta.url` (executor.js, auditor.js, ../renderer) finds it from any chunk.
      output: { format: 'es', entryFileNames: '[name].js', chunkFileNames: '[name]-[hash].js' },
    },
  },
});
