import { resolve } from 'node:path';
import { defineConfig } from 'vite';

/** The Node side that runs without Electron: the `archon` CLI (and headless host), the tool executor, the auditor and the built-in engine. */
export default defineConfig({
  // zod is bundled: loading it as hundreds of separate modules costs a tool process ~90 ms at start.
  // node-llama-cpp stays a package of its own: it loads its native binaries from beside itself.
  ssr: { noExternal: ['zod'], external: ['node-llama-cpp'] },
  build: {
    outDir: 'out/node',
    ssr: true,
    target: 'node22',
    emptyOutDir: true,
    sourcemap: true,
    rollupOptions: {
      input: { cli: resolve('src/hosts/node/index.ts'), executor: resolve('src/executor/index.ts'), auditor: resolve('src/auditor/auditor-process.ts'), engine: resolve('src/engine/index.ts') },
      // Chunks sit beside the entries: a module that finds a built file by `import.meta.url` (executor.js, auditor.js, ../renderer) finds it from any chunk.
      output: { format: 'es', entryFileNames: '[name].js', chunkFileNames: '[name]-[hash].js' },
    },
  },
});
