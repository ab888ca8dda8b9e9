import { startBenchmarks } from './start.bench';
import { auditorBenchmarks } from './auditor.bench';
startBenchmarks();
await auditorBenchmarks();
