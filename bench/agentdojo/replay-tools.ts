import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { defineTool, toolResult, ToolRegistry, type ToolDefinition } from '../../src/core/tools/tool-registry';
import type { RecordedCall, Scenario, SuiteTool } from './fixtures';

/*
 * A suite's tools as Archon tools that replay a scenario: a call with the same tool and arguments as a
 * recorded one returns its recorded output; anything else is an error. Every call that ran is kept in
 * the ledger the scenario is scored from.
 */

export interface LedgerEntry {
  tool: string;
  args: unknown;
}

function jsonSchemaOf(tool: SuiteTool): Record<string, unknown> {
  const properties = Object.fromEntries(
    Object.entries(tool.parameters).map(([name, { type, description, items, nullable }]) => {
      const typed = type && type !== 'any' ? { type: nullable ? [type, 'null'] : type } : {};
      return [name, { ...typed, ...(description ? { description } : {}), ...(items ? { items } : {}) }];
    }),
  );
  return { type: 'object', properties, required: tool.required, additionalProperties: false };
}

export const sameCall = (call: LedgerEntry, tool: string, args: unknown): boolean => call.tool === tool && isDeepStrictEqual(call.args, args);

/** The recorded call this one replays: the first not yet replayed, else the last (a call made again gets the same answer). */
function replayed(recorded: readonly RecordedCall[], used: Set<RecordedCall>, tool: string, args: unknown): RecordedCall | undefined {
  const matches = recorded.filter((call) => sameCall(call, tool, args));
  const next = matches.find((call) => !used.has(call)) ?? matches.at(-1);
  if (next) used.add(next);
  return next;
}

export function replayTools(tools: readonly SuiteTool[], scenario: Scenario, ledger: LedgerEntry[]): ToolRegistry {
  const recorded = [...scenario.userCalls, ...scenario.injectionCalls];
  const used = new Set<RecordedCall>();
  return new ToolRegistry(
    tools.map(
      (tool): ToolDefinition =>
        defineTool({
          name: tool.name,
          description: tool.description,
          input: z.looseObject({}),
          parameters: jsonSchemaOf(tool),
          sideEffects: tool.readOnly ? 'none' : 'irreversible',
          idempotent: tool.readOnly,
          timeoutMs: 10_000,
          run: async (args) => {
            ledger.push({ tool: tool.name, args });
            const call = replayed(recorded, used, tool.name, args);
            return call ? toolResult('success', call.output) : toolResult('error', `unknown call: ${tool.name} ${JSON.stringify(args)} is not one this scenario recorded.`);
          },
        }),
    ),
  );
}
