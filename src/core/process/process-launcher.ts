import type { ExecutorMessage, HostMessage } from '../../shared/executor-protocol';
import type { ProcessChannel } from './process-channel';

export interface LaunchOptions {
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  execArgv?: string[];
}

/** A tool process, whichever way it was started. */
export interface ToolProcess extends ProcessChannel<ExecutorMessage, HostMessage> {
  readonly pid: number | undefined;
  /** Signals the process's whole group, so whatever it spawned goes too. */
  kill(signal?: NodeJS.Signals): void;
}

/**
 * Starts tool processes: Electron's utilityProcess in the app (src/main), child_process.fork in the
 * CLI, the headless host and tests (child-process-launcher.ts). The runtime sees only this interface.
 */
export interface ProcessLauncher {
  launch(entry: string, options?: LaunchOptions): ToolProcess;
}
