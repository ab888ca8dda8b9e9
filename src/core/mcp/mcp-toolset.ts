import type { JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { ErrorCode, McpError, type ElicitRequest, type ElicitResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { McpServerConfig, ToolApprovalOverride } from '../../shared/schemas/settings';
import type { SeenDefinition, ToolDefinitionStore } from '../store/tool-definitions';
import { defineTool, toolResult, type ToolContext, type ToolDefinition, type ToolNotice } from '../tools/tool-registry';
import { jsonSchemaValidators as validators } from './json-schema';
import { McpServerError } from './mcp-failure';
import { McpCallLost, type ElicitationHandler } from './mcp-session';
import type { McpSessions } from './mcp-sessions';
import type { Confinement } from './stdio-launch';
import { definitionHash, factsOf, idempotentOf, sideEffectsOf } from './tool-definition';
import { registeredToolNames, serverWildcard } from './tool-names';
import { lostCallResult, toToolResult } from './tool-result';

/** How long one MCP call may take (the emergency stop and the run's signal end it sooner). */
export const MCP_CALL_TIMEOUT_MS = 120_000;

export interface McpToolsetOptions {
  servers: Readonly<Record<string, McpServerConfig>>;
  sessions: McpSessions;
  definitions: ToolDefinitionStore;
  confinement: Confinement;
  /** Registered names (`SERVER__TOOL`) the operator disabled. */
  disabledTools: readonly string[];
  /** Names taken by the run's other tools (the built-ins): no MCP tool gets one. */
  reservedNames?: readonly string[];
  now: () => Date;
  signal: AbortSignal;
}

/** The tool's own input schema as a validator; a schema that does not compile refuses every call, saying so. */
function argumentsValidator(tool: Tool): JsonSchemaValidator<unknown> {
  const { $schema: _dialect, ...schema } = tool.inputSchema as Record<string, unknown>;
  try {
    return validators.getValidator(schema);
  } catch (error) {
    const reason = `the server's input schema for ${tool.name} could not be compiled (${error instanceof Error ? error.message : String(error)})`;
    return () => ({ valid: false, data: undefined, errorMessage: reason });
  }
}

function argumentsInput(tool: Tool): z.ZodType {
  const validate = argumentsValidator(tool);
  return z.record(z.string(), z.unknown()).superRefine((args, check) => {
    const result = validate(args);
    if (!result.valid) check.addIssue({ code: 'custom', message: result.errorMessage });
  });
}

/** A server's elicitation/create put to the operator through the call's context; URL-mode requests and calls without a person are declined. */
function elicitationFor(server: string, context: ToolContext): ElicitationHandler {
  return async (params: ElicitRequest['params'], signal): Promise<ElicitResult> => {
    if (!context.elicit || params.mode === 'url' || !('requestedSchema' in params)) return { action: 'decline' };
    const answer = await context.elicit({ server, message: params.message, requestedSchema: params.requestedSchema as Record<string, unknown> }, AbortSignal.any([signal, context.signal]));
    return answer.action === 'accept' ? { action: 'accept', content: answer.content as ElicitResult['content'] } : { action: answer.action };
  };
}

interface ServerTool {
  server: string;
  config: McpServerConfig;
  tool: Tool;
  name: string;
  /** How the operator's approval settings stand to this definition. */
  settings: SeenDefinition['settings'];
}

/** A setting made against another definition asks always; one never made against any (the tool was not seen yet) may only ask more. */
function settingFor(standing: SeenDefinition['settings'], setting: ToolApprovalOverride | undefined): ToolApprovalOverride | undefined {
  if (standing === 'bound') return setting;
  if (standing === 'stale') return 'always';
  return setting === 'always' ? 'always' : undefined;
}

function mcpTool(options: McpToolsetOptions, entry: ServerTool): ToolDefinition {
  const { server, config, tool, name } = entry;
  const facts = factsOf(server, tool);
  return defineTool({
    name,
    description: tool.description ?? `${tool.name} (MCP server ${server})`,
    input: argumentsInput(tool),
    parameters: tool.inputSchema as Record<string, unknown>,
    sideEffects: sideEffectsOf(tool),
    idempotent: idempotentOf(tool),
    unconfined: options.confinement.sandbox === 'off' && 'command' in config,
    timeoutMs: MCP_CALL_TIMEOUT_MS,
    mcp: facts,
    approvalOverride: (settings) => settingFor(entry.settings, settings[name] ?? settings[serverWildcard(server)]),
    run: async (args, context) => {
      try {
        const session = await options.sessions.session(server, config, options.confinement, context.signal);
        const live = session.tools.find((candidate) => candidate.name === tool.name);
        if (!live || definitionHash(live) !== facts.definitionHash) {
          return toolResult('error', `MCP server "${server}" changed or removed ${tool.name} since the run started; the call did not run. The operator must see the new definition in a new run first.`);
        }
        return toToolResult(await session.callTool(tool.name, args as Record<string, unknown>, context.signal, context.timeoutMs, elicitationFor(server, context)));
      } catch (error) {
        if (error instanceof McpCallLost) return lostCallResult(error, idempotentOf(tool));
        if (error instanceof McpServerError) return toolResult('error', error.failure.message, { mcpFailure: error.failure.kind });
        if (error instanceof McpError && error.code === ErrorCode.RequestTimeout && !context.signal.aborted) {
          return toolResult('timeout', `${name} did not finish within ${context.timeoutMs / 1000} s; the server was told to cancel it.`);
        }
        throw error;
      }
    },
  });
}

/** One server's tools, registered as `SERVER__TOOL`, each definition recorded (a change is a notice); a server that fails is a notice too. */
async function serverTools(options: McpToolsetOptions, server: string, config: McpServerConfig): Promise<{ tools: ToolDefinition[]; notices: ToolNotice[] }> {
  try {
    const session = await options.sessions.session(server, config, options.confinement, options.signal);
    const names = registeredToolNames(server, session.tools.map((tool) => tool.name), options.reservedNames);
    const notices: ToolNotice[] = [];
    const tools: ToolDefinition[] = [];
    for (const tool of session.tools) {
      const name = names.get(tool.name)!;
      if (options.disabledTools.includes(name)) continue;
      const hash = definitionHash(tool);
      const seen = options.definitions.see(name, server, tool.name, hash, options.now().toISOString());
      if (seen.changedFrom) notices.push({ type: 'tool.definition_changed', tool: name, server, previousHash: seen.changedFrom, hash });
      tools.push(mcpTool(options, { server, config, tool, name, settings: seen.settings }));
    }
    return { tools, notices };
  } catch (error) {
    if (!(error instanceof McpServerError)) throw error;
    return { tools: [], notices: [{ type: 'mcp.server_failed', server, kind: error.failure.kind, message: error.failure.message }] };
  }
}

/** The tools of every enabled server, started in parallel; servers that fail leave the others usable. */
export async function mcpToolset(options: McpToolsetOptions): Promise<{ tools: ToolDefinition[]; notices: ToolNotice[] }> {
  const enabled = Object.entries(options.servers).filter(([, config]) => !config.disabled);
  const results = await Promise.all(enabled.map(([server, config]) => serverTools(options, server, config)));
  return { tools: results.flatMap((result) => result.tools), notices: results.flatMap((result) => result.notices) };
}
