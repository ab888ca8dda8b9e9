import { z } from 'zod';

/**
 * The part of OpenAI's chat-completions request the engine serves. Fields it does not use are
 * let through (clients send many); those it uses are checked.
 */

const TextPartSchema = z.object({ type: z.literal('text'), text: z.string() }).loose();
const OtherPartSchema = z.object({ type: z.string() }).loose();
const ContentSchema = z.union([z.string(), z.array(z.union([TextPartSchema, OtherPartSchema]))]).nullable().optional();

const ToolCallSchema = z.object({
  id: z.string(),
  type: z.literal('function').optional(),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
});
export type WireToolCall = z.infer<typeof ToolCallSchema>;

export const MessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.enum(['system', 'developer']), content: ContentSchema }).loose(),
  z.object({ role: z.literal('user'), content: ContentSchema }).loose(),
  z.object({ role: z.literal('assistant'), content: ContentSchema, tool_calls: z.array(ToolCallSchema).optional() }).loose(),
  z.object({ role: z.literal('tool'), content: ContentSchema, tool_call_id: z.string() }).loose(),
]);
export type WireMessage = z.infer<typeof MessageSchema>;

const ToolSchema = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'a tool name is 1 to 64 letters, digits, dots, dashes or underscores'),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});
export type WireTool = z.infer<typeof ToolSchema>;

const ToolChoiceSchema = z.union([z.enum(['auto', 'none', 'required']), z.object({ type: z.literal('function'), function: z.object({ name: z.string() }) })]);
export type ToolChoice = z.infer<typeof ToolChoiceSchema>;

const ResponseFormatSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({ type: z.literal('json_schema'), json_schema: z.object({ name: z.string().optional(), schema: z.record(z.string(), z.unknown()).optional() }).loose() }),
]);
export type ResponseFormat = z.infer<typeof ResponseFormatSchema>;

export const ChatRequestSchema = z
  .object({
    model: z.string().optional(),
    messages: z.array(MessageSchema).min(1),
    stream: z.boolean().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
    tools: z.array(ToolSchema).optional(),
    tool_choice: ToolChoiceSchema.optional(),
    response_format: ResponseFormatSchema.optional(),
    max_tokens: z.int().positive().nullable().optional(),
    max_completion_tokens: z.int().positive().nullable().optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().gt(0).max(1).nullable().optional(),
    seed: z.int().nullable().optional(),
    stop: z.union([z.string(), z.array(z.string()).max(16)]).nullable().optional(),
  })
  .loose();
export type ChatRequest = z.infer<typeof ChatRequestSchema>;

/** A message's text: the string, or its text parts joined (other parts, like images, this engine cannot read). */
export function textOf(content: z.infer<typeof ContentSchema>): string {
  if (typeof content === 'string') return content;
  return (content ?? []).map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('');
}
