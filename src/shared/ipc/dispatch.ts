import { ArchonError, describeZodError, toErrorEnvelope } from '../errors';
import {
  contract,
  isCommandName,
  type CommandName,
  type CommandOutput,
  type ParsedCommandInput,
} from './contract';
import type { ResultEnvelope } from './envelope';

export interface CommandContext {
  signal: AbortSignal;
}

export type CommandHandlers = {
  [K in CommandName]: (input: ParsedCommandInput<K>, context: CommandContext) => Promise<CommandOutput<K>>;
};

type AnyHandler = (input: unknown, context: CommandContext) => Promise<unknown>;

/**
 * The trust boundary for every command, whatever the transport: the name must be in the contract,
 * the payload must parse, and whatever happens the caller gets an envelope, never an exception.
 */
export async function dispatchCommand(
  handlers: CommandHandlers,
  name: string,
  rawInput: unknown,
  context: CommandContext,
): Promise<ResultEnvelope<unknown>> {
  if (!isCommandName(name)) {
    const error = new ArchonError('UNKNOWN_COMMAND', `Unknown command "${name}". Known commands: ${Object.keys(contract).join(', ')}.`);
    return { ok: false, error: toErrorEnvelope(error) };
  }
  const parsed = contract[name].input.safeParse(rawInput ?? {});
  if (!parsed.success) {
    const error = new ArchonError('VALIDATION_FAILED', `Invalid input for ${name}: ${describeZodError(parsed.error)}`);
    return { ok: false, error: toErrorEnvelope(error) };
  }
  try {
    const handler = handlers[name] as AnyHandler;
    const value: unknown = await handler(parsed.data, context);
    return { ok: true, value: contract[name].output.parse(value) };
  } catch (error) {
    return { ok: false, error: toErrorEnvelope(error) };
  }
}
