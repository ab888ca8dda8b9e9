import { Command, CommanderError, InvalidArgumentError } from 'commander';
import packageJson from '../../../package.json' with { type: 'json' };
import { ArchonError } from '../../shared/errors';
import type { Auditor } from '../../auditor/auditor';
import type { ArchonRuntime } from '../../core/runtime';
import { addDreamFlags, addMcpListFlags, addRestateFlags, addRunFlags, addRunSettingFlags, addScheduleFlags, httpUrl, shortName, type DreamFlags, type McpListFlags, type RunFlags } from './command-flags';
import { untilInterrupted } from './interrupt';
import { addMemoryListFlags, addMemoryOutputFlags, type MemoryListFlags } from './memory-command';
import type { ServeFlags } from './serve-command';
import type { UndoFlags } from './undo-command';
import type { WorkerFlags } from './worker-command';
import type { ApproveFlags, ClusterFlags, ScheduleAddFlags } from './cluster-command';

export const EXIT = { ok: 0, failed: 1, usage: 2, stopped: 3, budget: 4, rejected: 5, paused: 6 } as const;

interface DataDirOption {
  dataDir?: string;
}

/*
 * Each command imports what it does when it runs (dynamic `import()`, a chunk of its own in the
 * build): `--help`, `runs` and `estop` load neither the model client nor the tool host.
 */

/** `run`, `resume` and `dream`: the runtime with its auditor process, drained before the command ends. */
async function withAuditedRuntime<T>(options: DataDirOption, use: (runtime: ArchonRuntime) => Promise<T>): Promise<T> {
  const { openAuditedRuntime } = await import('./audited-runtime');
  const audited = await openAuditedRuntime(options.dataDir);
  try {
    return await use(audited.runtime);
  } finally {
    await audited.close();
  }
}

/** Commands that start no run (`runs`, `estop`): an emergency stop never waits for, nor depends on, the auditor. */
async function withRuntime<T>(options: DataDirOption, use: (runtime: ArchonRuntime) => Promise<T>): Promise<T> {
  const [{ createRuntime }, { resolveDataDir }] = await Promise.all([import('../../core/runtime'), import('../../core/data-dir')]);
  const runtime = createRuntime({ dataDir: resolveDataDir(options.dataDir) });
  try {
    return await use(runtime);
  } finally {
    runtime.close();
  }
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('a port is a whole number from 0 to 65535 (0 = any free port).');
  return port;
}

/** A run id as typed: whole, or a prefix of exactly one audited run (the 8 characters the app shows). */
function auditedRunId(auditor: Auditor, typed: string): string {
  const matches = auditor.runIdsStartingWith(typed);
  if (matches.length === 1 && matches[0]) return matches[0];
  if (matches.length === 0) throw new ArchonError('NOT_FOUND', `No audited run has an id starting with "${typed}". \`archon audit report\` without an id lists today's runs.`);
  throw new ArchonError('VALIDATION_FAILED', `"${typed}" matches ${matches.length} audited runs: ${matches.join(', ')}. Type more of the id.`);
}

/** `archon audit verify`: exit 0 intact (with a warning when the log lags behind archon.db), 1 tampered or damaged, naming where. */
async function verifyAudit(dataDir: string | undefined): Promise<number> {
  const { inspectAudit } = await import('./audited-runtime');
  try {
    const result = inspectAudit(dataDir, (auditor) => auditor.verify());
    if (result.intact) {
      process.stdout.write(`Audit log intact: ${result.records} records, chain and signatures verified.\n`);
      if (result.behind) {
        process.stdout.write(
          `Warning: the log is behind: ${result.behind.events} event${result.behind.events === 1 ? '' : 's'} not yet recorded (${result.behind.detail}). Nothing recorded was altered; the auditor records them while Archon runs, or at the next \`archon run\`, \`resume\` or \`serve\` on this data dir.\n`,
        );
      }
      return EXIT.ok;
    }
    process.stdout.write(`Audit log TAMPERED: ${result.problem}${result.seq === null ? '' : ` (first bad record: ${result.seq})`}.\n`);
    return EXIT.failed;
  } catch (error) {
    process.stdout.write(`Audit log TAMPERED or damaged: ${(error as Error).message}\n`);
    return EXIT.failed;
  }
}

/** `run --detach`: only with --engine restate, and with none of the flags only this terminal's run takes. */
function detachable(flags: RunFlags & { followUp?: string }): RunFlags {
  const local = (['followUp', 'roles', 'mcpConfig', 'apiKey', 'apiKeyFile', 'price', 'budgetPreset', 'allowNetwork'] as const).filter((flag) => flags[flag] !== undefined);
  if (flags.engine !== 'restate') throw new ArchonError('CONFIG_INVALID', '--detach sends the run to a Restate cluster: add --engine restate and the cluster\'s flags (see docs/scale-out.md).');
  if (local.length > 0) throw new ArchonError('CONFIG_INVALID', `--detach leaves ${local.map((flag) => `--${flag.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`).join(', ')} to this terminal's runs: a worker's own Settings and key serve a detached run.`);
  return flags;
}

export function buildProgram(): Command {
  const program = new Command('archon')
    .description('A desktop control room for autonomous LLM agents.')
    .version(packageJson.version)
    .showHelpAfterError('(run `archon --help` for usage)')
    .exitOverride();
  const dataDirOption = ['--data-dir <dir>', 'the data folder (default: ARCHON_DATA_DIR, else the platform app-data folder)'] as const;

  addRunFlags(
    program
      .command('run')
      .description('run one goal to its end')
      .argument('<goal>', 'what the agents should achieve')
      .option('--follow-up <run-id>', "continue a finished run: the goal is the new instruction, the earlier run's goal, plan and answer its context")
      .option('--detach', 'with --engine restate: send the run to the cluster, where a worker drives it with or without this terminal, and end here (see docs/scale-out.md)'),
  ).action(async (goal: string, options: RunFlags & DataDirOption & { followUp?: string }) => {
    if (options.detach) {
      exitCode = await (await import('./cluster-command')).detachRunFromCli(goal, detachable(options));
      return;
    }
    exitCode = await withAuditedRuntime(options, async (runtime) => (await import('./run-command')).runFromCli(runtime, options, { goal, followUpOf: options.followUp && runtime.store.runs.resolveRunId(options.followUp) }));
  });
  addRunFlags(program.command('resume').description('continue an interrupted run (its own settings are the defaults)').argument('<run-id>')).action(
    async (runId: string, options: RunFlags & DataDirOption) => {
      exitCode = await withAuditedRuntime(options, async (runtime) => (await import('./run-command')).runFromCli(runtime, options, { resume: runId }));
    },
  );

  program
    .command('undo')
    .description("revert a run's file writes, last first (shows the change and asks first); a file changed since is left and reported")
    .argument('<run-id>')
    .option(...dataDirOption)
    .option('--yes', 'revert without asking (for scripts)')
    .action(async (runId: string, options: DataDirOption & UndoFlags) => {
      exitCode = await withRuntime(options, async (runtime) => (await import('./undo-command')).undoFromCli(runtime, runId, options));
    });

  addMcpListFlags(program.command('mcp').description('MCP tool servers').command('list').description('start each MCP server, list its tools with their side effects, say what failed').option(...dataDirOption)).action(
    async (options: McpListFlags & DataDirOption) => {
      exitCode = await withRuntime(options, async (runtime) => (await import('./mcp-command')).listMcpServers(runtime, options));
    },
  );
  const memory = program.command('memory').description('long-term memory: what runs learned (facts, episodes, lessons) and your preferences');
  addMemoryListFlags(memory.command('list').description('list memories, newest first').option(...dataDirOption)).action(async (options: MemoryListFlags & DataDirOption) => {
    exitCode = await withRuntime(options, async (runtime) => (await import('./memory-command')).listMemory(runtime, options));
  });
  addMemoryOutputFlags(memory.command('search').description('search memories by their words (FTS5), best first').argument('<query>').option(...dataDirOption)).action(
    async (query: string, options: MemoryListFlags & DataDirOption) => {
      exitCode = await withRuntime(options, async (runtime) => (await import('./memory-command')).searchMemory(runtime, query, options));
    },
  );
  memory
    .command('forget')
    .description('delete a memory (its id, or the start of it): exit 2 for an unknown id')
    .argument('<id>')
    .option(...dataDirOption)
    .action(async (id: string, options: DataDirOption) => {
      exitCode = await withRuntime(options, async (runtime) => (await import('./memory-command')).forgetMemory(runtime, id));
    });
  for (const [name, pinned] of [['pin', true], ['unpin', false]] as const) {
    memory
      .command(name)
      .description(pinned ? 'keep a memory however full memory gets: exit 2 for an unknown id' : 'let a pinned memory be summarised away again when memory is full')
      .argument('<id>')
      .option(...dataDirOption)
      .action(async (id: string, options: DataDirOption) => {
        exitCode = await withRuntime(options, async (runtime) => (await import('./memory-command')).pinMemory(runtime, id, pinned));
      });
  }
  for (const [name, global] of [['global', true], ['local', false]] as const) {
    memory
      .command(name)
      .description(global ? 'let runs in every workspace recall a memory: exit 2 for an unknown id' : "let only runs in the memory's own workspace recall it: exit 2 for an unknown id")
      .argument('<id>')
      .option(...dataDirOption)
      .action(async (id: string, options: DataDirOption) => {
        exitCode = await withRuntime(options, async (runtime) => (await import('./memory-command')).scopeMemory(runtime, id, global));
      });
  }

  const models = program.command('models').description("the built-in engine's GGUF models: the catalogue, downloads and local files");
  models
    .command('list')
    .description('the catalogue with what is installed, then models pulled from a URL and local files added')
    .option(...dataDirOption)
    .option('--json', 'one JSON object per line')
    .action(async (options: DataDirOption & { json?: boolean }) => {
      exitCode = (await import('./models-command')).listModels(options);
    });
  models
    .command('pull')
    .description('download a model (resumes an interrupted pull, checks its SHA-256): exit 0 installed, 1 failed, 3 cancelled, 6 not enough disk')
    .argument('<name>', 'a catalogue name, or with --url the name to store the file under')
    .option(...dataDirOption)
    .option('--url <url>', 'download this GGUF file instead of a catalogue model (with --sha256)')
    .option('--sha256 <hex>', "the file's published SHA-256 (with --url)")
    .action(async (name: string, options: DataDirOption & { url?: string; sha256?: string }) => {
      exitCode = await (await import('./models-command')).pullModel(name, options);
    });
  models
    .command('rm')
    .description("delete a pulled model's file; a local file added is only taken off the list")
    .argument('<name>')
    .option(...dataDirOption)
    .action(async (name: string, options: DataDirOption) => {
      exitCode = (await import('./models-command')).removeModel(name, options);
    });
  models
    .command('add')
    .description('add a local .gguf file to the library (recorded where it is, not copied)')
    .argument('<path>', 'the .gguf file')
    .option(...dataDirOption)
    .option('--name <name>', 'the name to run it by (default: from its file name)')
    .action(async (path: string, options: DataDirOption & { name?: string }) => {
      exitCode = (await import('./models-command')).addModel(path, options);
    });

  program
    .command('runs')
    .description('list runs')
    .option(...dataDirOption)
    .option('--json', 'one JSON object per line')
    .action(async (options: DataDirOption & { json?: boolean }) => {
      const runs = await withRuntime(options, async (runtime) => runtime.store.runs.listRuns(500));
      for (const run of runs) {
        process.stdout.write(options.json ? `${JSON.stringify(run)}\n` : `${run.id}  ${(run.kind ?? 'goal').padEnd(5)}  ${run.status.padEnd(16)}  ${run.createdAt}  ${run.goal}\n`);
      }
      if (runs.length === 0 && !options.json) process.stdout.write('No runs yet.\n');
    });

  addRestateFlags(
    program
      .command('estop')
      .description('emergency stop: stop every run that shares the data dir, and with --cluster-secret-file every run and tool call on that Restate cluster (latched until --reset)')
      .option(...dataDirOption)
      .option('--reset', 're-arm after a stop; restarts nothing')
      .option('--reason <text>', 'why', 'Emergency stop from the command line'),
  ).action(async (options: DataDirOption & ClusterFlags & { reset?: boolean; reason: string }) => {
      const { EmergencyStop } = await import('../../core/stop/emergency-stop');
      const state = await withRuntime(options, (runtime) => {
        const estop = new EmergencyStop(runtime.store, runtime.bus, runtime.now);
        return options.reset ? Promise.resolve(estop.reset('Re-armed from the command line')) : estop.trigger('cli', options.reason);
      });
      process.stdout.write(state.latched ? `Emergency stop latched at ${state.since}. Re-arm with \`archon estop --reset\`.\n` : 'Re-armed. Nothing was restarted.\n');
      await (await import('./audited-runtime')).catchUpAudit(options.dataDir);
      if (options.clusterSecretFile !== undefined) exitCode = await (await import('./stop-command')).clusterEstopFromCli(state, options);
      else if (options.restateIngress !== undefined || options.restateAdmin !== undefined) throw new ArchonError('CONFIG_INVALID', `${state.latched ? 'Stopped' : 'Re-armed'} here only: the Restate cluster needs --cluster-secret-file too, the secret its workers check the stop against.`);
    });

  addRestateFlags(
    program
      .command('stop')
      .description('stop one run (the 8-character id is enough), wherever it runs; with --cluster-secret-file, one a worker of that Restate cluster drives (its whole id); the emergency stop stays armed: exit 0 stopped, 1 not running, 2 unknown id')
      .argument('<run-id>')
      .option(...dataDirOption),
  ).action(async (runId: string, options: DataDirOption & ClusterFlags) => {
    if (options.clusterSecretFile !== undefined) {
      const { stopClusterRunFromCli } = await import('./cluster-command');
      exitCode = await untilInterrupted((signal) => stopClusterRunFromCli(runId, options, signal));
      return;
    }
    if (options.restateIngress !== undefined || options.restateAdmin !== undefined) throw new ArchonError('CONFIG_INVALID', 'A run on the Restate cluster is stopped with --cluster-secret-file too, the secret its workers check the stop against.');
    exitCode = await withRuntime(options, async (runtime) => (await import('./stop-command')).controlRunFromCli(runtime, runId, 'stop'));
  });

  program
    .command('pause')
    .description('pause one run at a safe point (in-flight calls cancelled, completed work kept); `archon resume` continues it: exit 0 paused, 1 not running, 2 unknown id')
    .argument('<run-id>')
    .option(...dataDirOption)
    .action(async (runId: string, options: DataDirOption) => {
      exitCode = await withRuntime(options, async (runtime) => (await import('./stop-command')).controlRunFromCli(runtime, runId, 'pause'));
    });

  addDreamFlags(
    program
      .command('dream')
      .description('learn lessons from finished runs not dreamt yet (the Dreamer), as a run of kind dream; prints what it stored: exit 0 done, 1 failed (an unreadable answer), 2 model server unreachable, 3 stopped (or the emergency stop is latched), 4 over the budget, 5 rejected')
      .option(...dataDirOption),
  ).action(async (options: DreamFlags & DataDirOption) => {
    exitCode = await withAuditedRuntime(options, async (runtime) => (await import('./dream-command')).dreamFromCli(runtime, options));
  });

  const audit = program.command('audit').description("the independent auditor's log and reports");
  audit
    .command('verify')
    .description("check the audit log's integrity: exit 0 intact (warning when it is behind archon.db), 1 tampered (saying where)")
    .option(...dataDirOption)
    .action(async (options: DataDirOption) => {
      exitCode = await verifyAudit(options.dataDir);
    });
  audit
    .command('report')
    .description("print the auditor's report on a run, or on a day's runs")
    .argument('[run-id]')
    .option(...dataDirOption)
    .option('--day <yyyy-mm-dd>', 'report on every run of that day (default: today)')
    .option('--json', 'JSON instead of Markdown')
    .action(async (runId: string | undefined, options: DataDirOption & { day?: string; json?: boolean }) => {
      const [{ inspectAudit }, { renderAuditMarkdown }] = await Promise.all([import('./audited-runtime'), import('../../shared/audit-markdown')]);
      const report = inspectAudit(options.dataDir, (auditor) => auditor.report(runId ? { runId: auditedRunId(auditor, runId) } : { day: options.day ?? new Date().toISOString().slice(0, 10) }));
      process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : renderAuditMarkdown(report));
    });
  audit
    .command('reset')
    .description('after a log that cannot be vouched for: set audit.db aside (kept) and start a new chain that names the reset')
    .requiredOption('--acknowledge <reason>', 'why the operator accepts the break in the chain (recorded in the new chain)')
    .option(...dataDirOption)
    .action(async (options: DataDirOption & { acknowledge: string }) => {
      const [{ resetAudit }, { resolveDataDir }] = await Promise.all([import('../../auditor/auditor'), import('../../core/data-dir')]);
      const { setAside, problem } = resetAudit(resolveDataDir(options.dataDir), options.acknowledge);
      process.stdout.write(`Audit log reset${problem ? ` (it was: ${problem})` : ''}. ${setAside ? `The old log is kept as ${setAside}. ` : ''}A new chain starts with the reset and your reason; runs may start again.\n`);
    });
  audit
    .command('thresholds')
    .description("show or set the detectors' thresholds (the operator's alone)")
    .option(...dataDirOption)
    .option('--set <name=value>', 'change one threshold')
    .action(async (options: DataDirOption & { set?: string }) => {
      const [{ AuditLog }, { findAuditSecrets }, { DEFAULT_THRESHOLDS }, { resolveDataDir }] = await Promise.all([
        import('../../auditor/audit-log'),
        import('../../auditor/audit-key'),
        import('../../auditor/detectors'),
        import('../../core/data-dir'),
      ]);
      const dataDir = resolveDataDir(options.dataDir);
      const log = AuditLog.open(dataDir, findAuditSecrets(dataDir), { readonly: !options.set });
      try {
        if (options.set) {
          const [name, value] = options.set.split('=');
          if (!name || !(name in DEFAULT_THRESHOLDS) || !Number.isFinite(Number(value))) {
            throw new ArchonError('VALIDATION_FAILED', `Use --set NAME=NUMBER with one of: ${Object.keys(DEFAULT_THRESHOLDS).join(', ')}.`);
          }
          log.setThreshold(name, Number(value));
        }
        process.stdout.write(`${JSON.stringify({ ...DEFAULT_THRESHOLDS, ...log.thresholdOverrides() }, null, 2)}\n`);
      } finally {
        log.close();
      }
    });

  addRestateFlags(
    program
      .command('worker')
      .description("run built-in tool calls for runs on a Restate cluster (run --engine restate), in this machine's sandbox and workspace; registers itself with the admin API")
      .option('--port <n>', 'port to serve on (0 = any free port)', parsePort, 0)
      .option('--host <address>', 'address to listen on', '127.0.0.1')
      .option('--advertise <url>', 'the address Restate reaches this worker at, when not the one it listens on (a load balancer in front of several workers)', httpUrl)
      .option('--workspace <dir>', 'the only folder file tools may touch (default: the current folder)')
      .option('--allow-network', 'let sandboxed commands (run_command) use the network (default: Settings, else off)')
      .option('--id <name>', 'the name the worker gives itself, up to 64 letters, digits, dots, dashes or underscores (default: host name and process id)', shortName)
      .option(...dataDirOption),
  ).action(async (flags: WorkerFlags & DataDirOption) => withAuditedRuntime(flags, async (runtime) => (await import('./worker-command')).serveWorker(runtime, flags)));

  const schedule = program.command('schedule').description('goals run on a cron schedule by the workers of a Restate cluster, while the desk is closed (see docs/scale-out.md)');
  addScheduleFlags(schedule.command('add').description('add a schedule (or replace the one of the same --id); prints its next run').argument('<goal>', 'what each run should achieve')).action(
    async (goal: string, flags: ScheduleAddFlags) => {
      exitCode = await (await import('./cluster-command')).addScheduleFromCli(goal, flags);
    },
  );
  addRestateFlags(schedule.command('list').description('the schedules the cluster keeps, with their next runs').option('--json', 'one JSON object per line')).action(async (flags: ClusterFlags & { json?: boolean }) => {
    exitCode = await (await import('./cluster-command')).listSchedulesFromCli(flags);
  });
  addRestateFlags(schedule.command('rm').description('remove a schedule: it starts no more runs').argument('<id>', 'the schedule\'s name', shortName)).action(async (id: string, flags: ClusterFlags) => {
    exitCode = await (await import('./cluster-command')).removeScheduleFromCli(id, flags);
  });
  addRestateFlags(program.command('cluster-runs').description('the runs the workers of the Restate cluster drive or drove (detached and scheduled), the latest first').option('--json', 'one JSON object per line')).action(
    async (flags: ClusterFlags & { json?: boolean }) => {
      exitCode = await (await import('./cluster-command')).listClusterRunsFromCli(flags);
    },
  );
  addRestateFlags(
    program
      .command('follow')
      .description('a run the workers of the Restate cluster drive, from any desk: its events as archon run prints them, until it ends; exit code as archon run\'s')
      .argument('<run-id>', 'the run\'s whole id, as archon cluster-runs lists it')
      .option('--json', 'one JSON event per line on stdout'),
  ).action(async (runId: string, flags: ClusterFlags & { json?: boolean }) => {
    const { followFromCli } = await import('./cluster-command');
    exitCode = await untilInterrupted((signal) => followFromCli(runId, flags, signal));
  });
  addRestateFlags(program.command('approvals').description('what scheduled runs ask you, waiting on the Restate cluster (answer with archon approve)').option('--json', 'one JSON object per line')).action(
    async (flags: ClusterFlags & { json?: boolean }) => {
      exitCode = await (await import('./cluster-command')).listClusterApprovalsFromCli(flags);
    },
  );
  addRestateFlags(
    program
      .command('approve')
      .description("answer a scheduled run's approval (archon approvals lists them): yes, or --reject")
      .argument('<id>', 'the approval, as archon approvals lists it')
      .option('--reject', 'answer no')
      .option('--feedback <text>', 'with --reject: what the agent is told'),
  ).action(async (id: string, flags: ApproveFlags) => {
    exitCode = await (await import('./cluster-command')).answerClusterApprovalFromCli(id, flags);
  });
  program
    .command('inbox')
    .description('runs schedules started that ended or wait for you, the latest first')
    .option(...dataDirOption)
    .option('--json', 'one JSON object per line')
    .action(async (options: DataDirOption & { json?: boolean }) => {
      exitCode = await withRuntime(options, async (runtime) => (await import('./cluster-command')).inboxFromCli(runtime, options));
    });

  addRunSettingFlags(
    program
      .command('serve')
      .description('start the headless host: the app in a browser, on 127.0.0.1 with a token; run flags are defaults for runs started there')
      .option('--port <n>', 'port (0 = any free port)', parsePort, 0)
      .option('--trust-ui', 'let the page widen what agents may do without asking on this terminal'),
  ).action(async (flags: ServeFlags) => (await import('./serve-command')).serve(flags));

  return program;
}

/** Set by subcommands whose exit code says how they ended (run, resume). */
let exitCode: number = EXIT.ok;

/**
 * Other processes of the user can read this one's command line (`/proc/PID/cmdline`, `ps`). Setting
 * the process title overwrites it, so `--api-key`'s value is visible only while Archon starts.
 */
function hideApiKeyArgument(argv: string[]): void {
  if (argv.some((arg) => arg === '--api-key' || arg.startsWith('--api-key='))) process.title = 'archon';
}

export async function main(argv: string[]): Promise<number> {
  hideApiKeyArgument(argv);
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
    if (ArchonError.isInstance(error) && error.code === 'DISK_FULL') return EXIT.paused;
    return EXIT.usage;
  }
}
