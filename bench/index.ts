import { auditorBenchmarks } from './auditor.bench';
import { crashLoopBenchmarks } from './crash-loop.bench';
import { humanControlBenchmarks } from './human-control.bench';
import { runtimeBenchmarks } from './runtime.bench';
import { uiBenchmarks } from './ui.bench';
import { toolBenchmarks } from './tools.bench';
import { validationBenchmarks } from './validation.bench';
import { memoryBenchmarks } from './memory.bench';
import { startBenchmarks } from './start.bench';
import { scaleBenchmarks } from './scale.bench';
import { engineBenchmarks } from './engines.bench';
import { agentDojoBenchmarks } from './agentdojo.bench';
import { scaleOutBenchmarks } from './scale-out.bench';

/** `npm run bench`: every performance figure the issues ask for, printed; a bench throws only where an issue sets a limit on a count or a share (the verification cost, AgentDojo's attack success and utility), never on time. */
process.stdout.write(`Archon benchmarks — Node ${process.version}, ${new Date().toISOString()}\n`);
startBenchmarks();
await runtimeBenchmarks();
await toolBenchmarks();
await humanControlBenchmarks();
await validationBenchmarks();
await auditorBenchmarks();
await crashLoopBenchmarks();
await uiBenchmarks();
await memoryBenchmarks();
await scaleBenchmarks();
await scaleOutBenchmarks();
await engineBenchmarks();
await agentDojoBenchmarks();
