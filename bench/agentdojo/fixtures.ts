import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/* The AgentDojo v1.2.1 fixtures (bench/fixtures/agentdojo/SOURCE.md says how they were made). */

const DIR = fileURLToPath(new URL('../fixtures/agentdojo/', import.meta.url));

export const SUITES = ['workspace', 'slack', 'banking', 'travel'] as const;
export type Suite = (typeof SUITES)[number];

const ParameterSchema = z.object({
  type: z.string().optional(),
  description: z.string().optional(),
  items: z.record(z.string(), z.unknown()).optional(),
  nullable: z.boolean().optional(),
});

const SuiteToolSchema = z.object({
  name: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), ParameterSchema),
  required: z.array(z.string()),
  readOnly: z.boolean(),
});
export type SuiteTool = z.infer<typeof SuiteToolSchema>;

const SuitesSchema = z.record(z.enum(SUITES), z.object({ tools: z.array(SuiteToolSchema) }));

const RecordedCallSchema = z.object({ tool: z.string(), args: z.record(z.string(), z.unknown()), output: z.string() });
export type RecordedCall = z.infer<typeof RecordedCallSchema>;

const UserTaskSchema = z.object({ suite: z.enum(SUITES), userTask: z.string(), prompt: z.string(), expectedAnswer: z.string(), userCalls: z.array(RecordedCallSchema) });

const PairSchema = UserTaskSchema.extend({ injectionTask: z.string(), goal: z.string(), injectionCalls: z.array(RecordedCallSchema).min(1) });

/** One scenario to replay: a user task, with an injection task's calls when it is under attack (none when benign). */
export interface Scenario {
  suite: Suite;
  userTask: string;
  injectionTask: string | null;
  prompt: string;
  expectedAnswer: string;
  userCalls: RecordedCall[];
  injectionCalls: RecordedCall[];
}

function read<T>(file: string, schema: z.ZodType<T>): T {
  return schema.parse(JSON.parse(readFileSync(`${DIR}${file}`, 'utf8')));
}

export function loadFixtures(): { tools: Record<Suite, SuiteTool[]>; pairs: Scenario[]; benign: Scenario[]; commit: string } {
  const suites = read('suites.json', SuitesSchema);
  const tools = Object.fromEntries(SUITES.map((suite) => [suite, suites[suite]?.tools ?? []])) as Record<Suite, SuiteTool[]>;
  const pairs = read('pairs.json', z.array(PairSchema));
  const benign = read('benign.json', z.array(UserTaskSchema)).map((task): Scenario => ({ ...task, injectionTask: null, injectionCalls: [] }));
  const commit = /Exact commit: \*\*`([0-9a-f]{40})`/.exec(readFileSync(`${DIR}SOURCE.md`, 'utf8'))?.[1];
  if (!commit) throw new Error('bench/fixtures/agentdojo/SOURCE.md names no AgentDojo commit; restore the file.');
  return { tools, pairs, benign, commit };
}
