import { fileURLToPath } from 'node:url';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import packageJson from '../../../package.json' with { type: 'json' };
import { ArchonError } from '../../shared/errors';
import { resolveDataDir } from '../../core/data-dir';
import { recordEstop } from '../../core/command-handlers';
import { createRuntime, type ArchonRuntime } from '../../core/runtime';
import { startHeadlessHost } from './headless-host';
import { addRunFlags, runFromCli, type RunFlags } from './run-command';

export const EXIT = { ok: 0, failed: 1, usage: 2, stopped: 3, budget: 4, rejected: 5 } as const;

const RENDERER_DIR = fileURLToPath(new URL('../renderer', import.meta.url));

interface DataDirOption {
  dataDir?: string;
}

function openRuntime(options: DataDirOption): ArchonRuntime {
  return createRuntime({ dataDir: resolveDataDir(options.dataDir), version: packageJson.version, host: 'headless' });
}

async function withRuntimeAsync<T>(options: DataDirOption, use: (runtime: ArchonRuntime) => Promise<T>): Promise<T> {
  const runtime = openRuntime(options);
  try {
    return await use(runtime);
  } finally {
    runtime.close();
  }
}

function withRuntime<T>(options: DataDirOption, use: (runtime: ArchonRuntime) => T): T {
  const runtime = openRuntime(options);
  try {
    return use(runtime);
  } finally {
    runtime.close();
  }
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('a port is a whole number from 0 to 65535 (0 = any free port).');
  return port;
}

/** Subcommands whose capability has not landed yet say so plainly and exit 2 (usage/configuration). */
function notYet(what: string, issue: number): () => never {
  return () => {
    throw new ArchonError('NOT_AVAILABLE', `${what} is not available in this build yet (tracked in issue #${issue}); nothing was done.`);
  };
}

async function serve(options: DataDirOption & { port: number }): Promise<void> {
  const runtime = openRuntime(options);
  const host = await startHeadlessHost({ runtime, rendererDir: RENDERER_DIR, port: options.port });
  process.stdout.write(`Archon UI: ${host.url}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await host.close();
  runtime.close();
}

export function buildProgram(): Command {
  const program = new Command('archon')
    .description('A desktop control room for autonomous LLM agents.')
    .version(packageJson.version)
    .showHelpAfterError('(run `archon --help` for usage)')
    .exitOverride();
  const dataDirOption = ['--data-dir <dir>', 'the data folder (default: ARCHON_DATA_DIR, else the platform app-data folder)'] as const;

  addRunFlags(program.command('run').description('run one goal to its end').argument('<goal>', 'what the agents should achieve')).action(
    async (goal: string, options: RunFlags & DataDirOption) => {
      exitCode = await withRuntimeAsync(options, (runtime) => runFromCli(runtime, options, { goal }));
    },
  );
  addRunFlags(program.command('resume').description('continue an interrupted run (its own settings are the defaults)').argument('<run-id>')).action(
    async (runId: string, options: RunFlags & DataDirOption) => {
      exitCode = await withRuntimeAsync(options, (runtime) => runFromCli(runtime, options, { resume: runId }));
    },
  );

  program
    .command('runs')
    .description('list runs')
    .option(...dataDirOption)
    .option('--json', 'one JSON object per line')
    .action((options: DataDirOption & { json?: boolean }) => {
      const runs = withRuntime(options, (runtime) => runtime.store.runs.listRuns(500));
      for (const run of runs) {
        process.stdout.write(options.json ? `${JSON.stringify(run)}\n` : `${run.id}  ${run.status.padEnd(16)}  ${run.createdAt}  ${run.goal}\n`);
      }
      if (runs.length === 0 && !options.json) process.stdout.write('No runs yet.\n');
    });

  program
    .command('estop')
    .description('emergency stop: stop every run that shares the data dir (latched until --reset)')
    .option(...dataDirOption)
    .option('--reset', 're-arm after a stop; restarts nothing')
    .option('--reason <text>', 'why', 'Emergency stop from the command line')
    .action((options: DataDirOption & { reset?: boolean; reason: string }) => {
      const state = withRuntime(options, (runtime) =>
        options.reset
          ? recordEstop(runtime, 'reset', null, 'Re-armed from the command line')
          : recordEstop(runtime, 'trigger', 'cli', options.reason),
      );
      process.stdout.write(state.latched ? `Emergency stop latched at ${state.since}. Re-arm with \`archon estop --reset\`.\n` : 'Re-armed. Nothing was restarted.\n');
    });

  const audit = program.command('audit').description("the independent auditor's log and reports");
  audit.command('verify').description("check the audit log's integrity").option(...dataDirOption).action(notYet('`archon audit verify`', 6));
  audit.command('report').description("print the auditor's report").argument('[run-id]').option(...dataDirOption).option('--json').action(notYet('`archon audit report`', 6));

  program
    .command('serve')
    .description('start the headless host: the app in a browser, on 127.0.0.1 with a token')
    .option('--port <n>', 'port (0 = any free port)', parsePort, 0)
    .option(...dataDirOption)
    .action(serve);

  return program;
}

/** Set by subcommands whose exit code says how they ended (run, resume). */
let exitCode: number = EXIT.ok;

export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    process.stderr.write(`archon: ${ArchonError.isInstance(error) ? error.message : String(error)}\n`);
    if (ArchonError.isInstance(error) && error.code === 'ESTOP_LATCHED') return EXIT.stopped;
    if (ArchonError.isInstance(error) && error.code === 'BUDGET_EXCEEDED') return EXIT.budget;
    return EXIT.usage;
  }
}
