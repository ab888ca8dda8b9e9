import { InvalidArgumentError, Option, type Command } from 'commander';
import { parseModelUrl } from '../../shared/model-presets';
import { RunOrderApproveSchema } from '../../shared/schemas/run-order';
import { ApproveModeSchema, ModelPriceSchema, PolicySchema, VerificationSchema, type ModelPrice, type RunOptions } from '../../shared/schemas/run';

/**
 * The flags of the commands that call a model or start tools, apart from what the commands do:
 * `archon --help` (and every command) reads them without loading the model client.
 */

/** Named budget presets: `small` caps a run at 2,000 tokens and the day at 10,000. */
export const BUDGET_PRESETS = { small: { maxTokens: 2000, dayMaxTokens: 10_000 } } as const;

export type BudgetPresetName = keyof typeof BUDGET_PRESETS;

/** Old names still accepted for a preset, but not listed in `--help`. */
const BUDGET_PRESET_ALIASES: Readonly<Record<string, BudgetPresetName>> = { 'seed-004': 'small' };

/** `--budget-preset NAME`: a preset's name, or an old name for one. */
export function budgetPreset(value: string): BudgetPresetName {
  if (Object.hasOwn(BUDGET_PRESETS, value)) return value as BudgetPresetName;
  const alias = Object.hasOwn(BUDGET_PRESET_ALIASES, value) ? BUDGET_PRESET_ALIASES[value] : undefined;
  if (alias) return alias;
  throw new InvalidArgumentError(`Allowed choices are ${Object.keys(BUDGET_PRESETS).join(', ')}.`);
}

export interface RunFlags {
  budgetPreset?: BudgetPresetName;
  modelUrl?: string;
  model?: string;
  apiKey?: string;
  apiKeyFile?: string;
  policy?: RunOptions['policy'];
  /** `desk` only with `--detach`: a person answers with `archon approve`. */
  approve?: 'prompt' | 'auto' | 'deny' | 'desk';
  detach?: boolean;
  concurrency?: number;
  maxTokens?: number;
  maxCost?: number;
  price?: ModelPrice;
  maxIterations?: number;
  maxSteps?: number;
  verify?: RunOptions['verification'];
  acceptGaps?: boolean;
  workspace?: string;
  allowNetwork?: boolean;
  mcpConfig?: string;
  roles?: string;
  json?: boolean;
  /** False with `--no-memory`. */
  memory?: boolean;
  embeddingModel?: string;
  engine?: 'local' | 'restate';
  restateIngress?: string;
  restateAdmin?: string;
  clusterSecretFile?: string;
}

/** Restate's own defaults on this machine. */
export const RESTATE_DEFAULTS = { ingress: 'http://127.0.0.1:8080', admin: 'http://127.0.0.1:9070' } as const;

export function httpUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value.replace(/\/+$/, '');
  } catch {
    // Said below.
  }
  throw new InvalidArgumentError('expected an http:// or https:// address, e.g. http://127.0.0.1:8080.');
}

/** A worker's or a schedule's name. */
export function shortName(value: string): string {
  if (!/^[\w.-]{1,64}$/.test(value)) throw new InvalidArgumentError('up to 64 letters, digits, dots, dashes or underscores.');
  return value;
}

/** Where a Restate cluster answers: `run --engine restate` and `worker` take the same two flags. */
export function addRestateFlags(command: Command): Command {
  return command
    .option('--restate-ingress <url>', `the Restate server's ingress (default: ${RESTATE_DEFAULTS.ingress})`, httpUrl)
    .option('--restate-admin <url>', `the Restate server's admin API (default: ${RESTATE_DEFAULTS.admin})`, httpUrl)
    .option('--cluster-secret-file <file>', 'a file holding the secret each tool call is signed with: the same on the desk and every worker, outside the workspace');
}

function positiveInt(name: string, max: number) {
  return (value: string) => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < 1 || number > max) throw new InvalidArgumentError(`${name} is a whole number from 1 to ${max}.`);
    return number;
  };
}

/** `--price 2.5,10`: USD per million input and output tokens. */
function modelPrice(value: string): ModelPrice {
  const [input, output, ...rest] = value.split(',').map((part) => Number(part.trim()));
  const parsed = ModelPriceSchema.safeParse({ inputPerMillion: input, outputPerMillion: output });
  if (!parsed.success || rest.length > 0) throw new InvalidArgumentError('expected INPUT,OUTPUT in USD per million tokens, e.g. 2.5,10.');
  return parsed.data;
}

function modelUrl(value: string): string {
  const parsed = parseModelUrl(value);
  if ('problem' in parsed) throw new InvalidArgumentError(`${parsed.problem}.`);
  return parsed.url;
}

function positiveNumber(value: string): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0) throw new InvalidArgumentError('expected a positive number.');
  return number;
}

/** The run settings `run`, `resume` and `serve` share (for `serve`, defaults for runs started in the UI). */
export function addRunSettingFlags(command: Command): Command {
  return command
    .option('--model-url <url>', 'OpenAI-compatible base URL ending in /v1, or a preset: ollama, lm-studio, llama-cpp, vllm, openai', modelUrl)
    .option('--model <name>', 'the model (default: from settings, else the first the server lists)')
    .option('--api-key <key>', 'API key (default: OPENAI_API_KEY); visible to other processes of your user, prefer --api-key-file')
    .option('--api-key-file <file>', 'read the API key from this file')
    .addOption(new Option('--policy <policy>', 'who is asked before what').choices(PolicySchema.options))
    .option('--concurrency <n>', 'steps at once (default: the server’s parallel slots, else 4)', positiveInt('--concurrency', 64))
    .option('--max-tokens <n>', 'token cap for the run', positiveInt('--max-tokens', 1e9))
    .option('--max-cost <usd>', 'money cap for the run, in USD', positiveNumber)
    .option('--workspace <dir>', 'the only folder file tools may touch (default: the current folder)')
    .option('--allow-network', 'let sandboxed commands (run_command) use the network (default: Settings, else off)')
    .option('--data-dir <dir>', 'the data folder (default: ARCHON_DATA_DIR, else the platform app-data folder)');
}

/** The flags of `run` and `resume` (the brief's CLI contract). */
export function addRunFlags(command: Command): Command {
  const flags = addRunSettingFlags(command)
    .addOption(new Option('--approve <mode>', 'who answers approvals: the terminal, always yes, always no, or (with --detach) a person with archon approve').choices([...ApproveModeSchema.options, 'desk']))
    .option('--max-iterations <n>', 'model turns per step (default 10)', positiveInt('--max-iterations', 50))
    .option('--max-steps <n>', "the most steps the run's plan may have; the run's call caps grow with it (default: Settings, else 64)", positiveInt('--max-steps', 1000))
    .addOption(
      new Option('--verify <mode>', "how results are checked: off; checks (default: each step's claims against what was recorded, and the goal's success criteria with one critic call when the run ends); critic (also a critic call per step and on the plan, and the model states the goal's criteria)").choices(
        VerificationSchema.options,
      ),
    )
    .option('--accept-gaps', 'accept success criteria the outcome check finds unmet: the run ends completed with gaps (exit 7) instead of asking or failing')
    .addOption(
      new Option('--budget-preset <name>', 'named token caps: small = 2,000 tokens a run, 10,000 a day')
        .choices(Object.keys(BUDGET_PRESETS))
        // after choices(), so that help lists only the preset names while old names are still accepted
        .argParser(budgetPreset),
    )
    .option('--price <input,output>', "this run's model price in USD per million input and output tokens, e.g. 2.5,10 (default: Settings' model prices)", modelPrice)
    .option('--no-memory', 'neither recall from nor store to long-term memory in this run')
    .option('--embedding-model <name>', "the model server's embedding model, for vector recall from memory (default: Settings, else lexical recall only)")
    .option('--mcp-config <file>', 'MCP servers for this run, as Claude Desktop writes them: {"mcpServers": {...}} (added to those in Settings)')
    .option('--roles <file>', 'roles for this run: {"roles": {"NAME": {"model"?: {"url", "name", "apiKey"?}, "tools"?, ...}}} (instead of those in Settings); on resume it gives the roles and their keys again')
    .option('--json', 'print one JSON event per line on stdout');
  return addRestateFlags(
    flags.addOption(new Option('--engine <engine>', "where the run's built-in tool calls run: local (this machine's tool processes) or restate (the workers of a Restate cluster, see docs/scale-out.md); default: Settings' cluster if one is set, else local").choices(['local', 'restate'])),
  );
}

export type DreamFlags = Pick<RunFlags, 'modelUrl' | 'model' | 'apiKey' | 'apiKeyFile' | 'policy' | 'approve'>;

export function addDreamFlags(command: Command): Command {
  return command
    .option('--model-url <url>', 'OpenAI-compatible base URL ending in /v1, or a preset (default: from settings)')
    .option('--model <name>', 'the model (default: from settings, else the first the server lists)')
    .option('--api-key <key>', 'API key (default: OPENAI_API_KEY)')
    .option('--api-key-file <file>', 'read the API key from this file')
    .addOption(new Option('--policy <policy>', 'who is asked before what (supervised: before the model call)').choices(PolicySchema.options))
    .addOption(new Option('--approve <mode>', 'who answers approvals: the terminal, always yes, always no').choices(ApproveModeSchema.options));
}

export interface McpListFlags {
  mcpConfig?: string;
  json?: boolean;
  workspace?: string;
  allowNetwork?: boolean;
}

export function addMcpListFlags(command: Command): Command {
  return command
    .option('--mcp-config <file>', 'MCP servers as Claude Desktop writes them: {"mcpServers": {...}} (added to those in Settings)')
    .option('--workspace <dir>', 'the folder stdio servers start in, as in a run (default: the current folder)')
    .option('--allow-network', 'let stdio servers use the network (default: Settings)')
    .option('--json', 'one JSON object per server and line');
}

/** `schedule add`: when, its name, its word on every approval, and the run settings a schedule carries (the worker's Settings give the rest). */
export function addScheduleFlags(command: Command): Command {
  return addRestateFlags(
    command
      .requiredOption('--cron <expression>', 'when, as five fields: minute hour day-of-month month day-of-week, in the workers\' time zone (e.g. "0 7 * * *": every day at 07:00)')
      .option('--id <name>', 'the schedule\'s name, up to 64 letters, digits, dots, dashes or underscores; the same name replaces that schedule (default: a new name)', shortName)
      .addOption(new Option('--approve <mode>', 'who answers the approvals its runs ask: always yes, always no, or a person at a desk with archon approve (default: deny)').choices(RunOrderApproveSchema.options))
      .option('--model-url <url>', 'OpenAI-compatible base URL ending in /v1, or a preset (default: the worker\'s Settings)', modelUrl)
      .option('--model <name>', 'the model (default: the worker\'s Settings)')
      .addOption(new Option('--policy <policy>', 'who is asked before what').choices(PolicySchema.options))
      .option('--max-tokens <n>', 'token cap for each run', positiveInt('--max-tokens', 1e9))
      .option('--max-cost <usd>', 'money cap for each run, in USD', positiveNumber)
      .option('--max-steps <n>', 'the most steps a run\'s plan may have', positiveInt('--max-steps', 1000))
      .addOption(new Option('--verify <mode>', 'how results are checked (see archon run --help)').choices(VerificationSchema.options))
      .option('--accept-gaps', 'unmet success criteria end a run completed with gaps instead of failed')
      .option('--no-memory', 'its runs neither recall from nor store to the worker\'s long-term memory')
      .option('--workspace <dir>', 'the only folder its file tools may touch, on the workers\' machine (default: the worker\'s --workspace)')
      .option('--json', 'print the schedule as JSON'),
  );
}
