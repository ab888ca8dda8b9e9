import { enableCompileCache } from 'node:module';

// V8 keeps the compiled CLI on disk (Node's compile cache, in the temp folder): later starts skip compiling it.
enableCompileCache();
const { main } = await import('./cli');
process.exitCode = await main(process.argv.slice(2));
