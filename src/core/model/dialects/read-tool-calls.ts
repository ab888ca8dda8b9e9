import type { ToolCallRequest } from '../chat';
import { argumentsText, type OfferedTool } from './dialect';
import { type DialectName } from './dialect-names';
import { DIALECTS, jsonAgentAnswer } from './families';
import { plainContent, splitReasoning } from './reasoning';

export interface DialectCall {
  name: string;
  /** JSON text of the arguments object (or the model's own text when it could not be read). */
  arguments: string;
}

export interface DialectReading {
  dialect: DialectName;
  calls: DialectCall[];
  /** What the model said before its calls, reasoning and call markup removed. */
  content: string;
  /** Where the calls began in the content; -1 when they were written inside the reasoning. */
  at: number;
}

export interface ReadOptions {
  /** Reasoning the server sent apart (`reasoning_content`); searched when the content holds no call. */
  reasoning?: string;
  /** The dialect this model has used so far in the run: tried first. */
  preferred?: DialectName | null;
}

function readIn(text: string, offered: readonly OfferedTool[], preferred: DialectName | null | undefined): Omit<DialectReading, 'content'> | null {
  const byName = new Map(offered.map((tool) => [tool.name, tool]));
  const order = preferred ? [...DIALECTS.filter((dialect) => dialect.name === preferred), ...DIALECTS.filter((dialect) => dialect.name !== preferred)] : DIALECTS;
  for (const dialect of order) {
    const found = dialect.read(text);
    const calls = (found?.calls ?? []).flatMap((call) => {
      const tool = byName.get(call.name);
      return tool ? [{ name: tool.name, arguments: argumentsText(call, tool) }] : [];
    });
    if (found && calls.length > 0) return { dialect: dialect.name, calls, at: found.at };
  }
  return null;
}

/**
 * The tool calls in what a model wrote, in whichever dialect it wrote them. Only names the request
 * offered count. The content is searched first, then the reasoning, so a call written while
 * thinking is still found. Null when there is no call.
 */
export function readToolCalls(text: string, offered: readonly OfferedTool[], options: ReadOptions = {}): DialectReading | null {
  if (offered.length === 0) return null;
  const split = splitReasoning(text);
  const inContent = readIn(split.content, offered, options.preferred);
  if (inContent) return { ...inContent, content: plainContent(split.content.slice(0, Math.max(inContent.at, 0))) };
  const reasoning = [options.reasoning ?? '', split.reasoning].filter(Boolean).join('\n');
  const inReasoning = reasoning ? readIn(reasoning, offered, options.preferred) : null;
  return inReasoning ? { ...inReasoning, content: plainContent(split.content), at: -1 } : null;
}

export interface ModelTurn {
  content: string;
  reasoning: string;
  toolCalls: ToolCallRequest[];
  dialect?: DialectName;
}

/**
 * What the model client does with every answer: reasoning wrappers move out of the content, and
 * when a request offered tools but the server returned none, a call the model wrote in its own
 * dialect (in the content or the reasoning) becomes a tool call.
 */
export function readModelTurn(turn: { content: string; reasoning: string; toolCalls: ToolCallRequest[] }, offered: readonly OfferedTool[] = []): ModelTurn {
  const split = splitReasoning(turn.content);
  const reasoning = [turn.reasoning, split.reasoning].filter(Boolean).join('\n');
  const content = plainContent(split.content);
  if (turn.toolCalls.length > 0) return { content, reasoning, toolCalls: turn.toolCalls };
  const found = readToolCalls(turn.content, offered, { reasoning: turn.reasoning });
  if (!found) return { content: offered.length > 0 ? (jsonAgentAnswer(content) ?? content) : content, reasoning, toolCalls: [] };
  return { content: found.content, reasoning, toolCalls: found.calls.map((call, index) => ({ id: `call_${index}`, ...call })), dialect: found.dialect };
}
