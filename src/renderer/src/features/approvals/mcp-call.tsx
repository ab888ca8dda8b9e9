import { Fragment } from 'react';
import { z } from 'zod';
import type { ApprovalRequest } from '../../../../shared/schemas/approval';

/** A tool call to an MCP server, as its approval carries it: the exact definition the grant is bound to. */
const McpCallSchema = z.object({
  tool: z.string(),
  args: z.unknown(),
  mcp: z.object({
    server: z.string(),
    tool: z.string(),
    description: z.string(),
    annotations: z.record(z.string(), z.unknown()).nullish(),
    definitionHash: z.string(),
  }),
});

/** The MCP hints, with what the protocol assumes when a server leaves one out. */
const HINTS = [
  { key: 'readOnlyHint', label: 'Read-only', assumed: false },
  { key: 'destructiveHint', label: 'Destructive', assumed: true },
  { key: 'idempotentHint', label: 'Idempotent', assumed: false },
  { key: 'openWorldHint', label: 'Open world', assumed: true },
] as const;

function hint(annotations: Record<string, unknown>, key: string, assumed: boolean): string {
  const value = annotations[key];
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return `${assumed ? 'yes' : 'no'} (not stated)`;
}

export type McpCall = z.infer<typeof McpCallSchema>;

/** The MCP call a tool_call approval is about, or null for a built-in tool. */
export function mcpCallOf(request: ApprovalRequest): McpCall | null {
  const parsed = McpCallSchema.safeParse(request.action);
  return request.kind === 'tool_call' && parsed.success ? parsed.data : null;
}

/** Server, tool, description, annotations with the side-effect class, and the full arguments of an MCP tool call. */
export function McpCallDetails({ call: { args, mcp }, request }: { call: McpCall; request: ApprovalRequest }) {
  const annotations = mcp.annotations ?? {};
  return (
    <section className="mcp-call" aria-label="MCP tool call">
      <dl className="explanation">
        <dt>Server</dt>
        <dd>{mcp.server}</dd>
        <dt>Tool</dt>
        <dd>{mcp.tool}</dd>
        <dt>Description</dt>
        <dd>{mcp.description || '(the server gives none)'}</dd>
        <dt>Side effects</dt>
        <dd>{request.explanation.reversibility.replace('_', ' ')}</dd>
        {HINTS.map(({ key, label, assumed }) => (
          <Fragment key={key}>
            <dt>{label}</dt>
            <dd>{hint(annotations, key, assumed)}</dd>
          </Fragment>
        ))}
        <dt>Definition</dt>
        <dd>
          <code>{mcp.definitionHash.replace(/^sha256:/, '').slice(0, 12)}</code>
        </dd>
      </dl>
      <h3>Arguments</h3>
      <pre className="action">
        {JSON.stringify(args, null, 2)}
      </pre>
    </section>
  );
}
