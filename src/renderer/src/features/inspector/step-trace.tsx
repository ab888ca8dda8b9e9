import type { RunEvent } from '../../../../shared/schemas/events';
import type { ToolResultPart } from '../../../../shared/schemas/tool';
import { InjectionMark } from '../approvals/possible-injection';

/** Raster images only: the page shows them as data: URLs, which the CSP allows for images alone. */
const SHOWN_IMAGES = /^image\/(png|jpeg|gif|webp)$/;

/**
 * A tool result's parts beyond its text: images as thumbnails, resources by their address. The app has no
 * safe way to open a link outside itself, so addresses are shown to copy, never followed.
 */
function ResultParts({ tool, parts }: { tool: string; parts: readonly ToolResultPart[] }) {
  const shown = parts.filter((part) => part.type !== 'text');
  if (shown.length === 0) return null;
  return (
    <ul className="result-parts" aria-label={`Result of ${tool}`}>
      {shown.map((part, index) => (
        <li key={index}>
          {part.type === 'image' &&
            (SHOWN_IMAGES.test(part.mimeType) ? (
              <img className="thumbnail" src={`data:${part.mimeType};base64,${part.data}`} alt={`Image ${index + 1} from ${tool}`} />
            ) : (
              <span>an image of type {part.mimeType}, not shown</span>
            ))}
          {part.type === 'resource' && (
            <span className="resource">
              resource {part.name && <strong>{part.name}</strong>} <code>{part.uri}</code>
              {part.mimeType && ` (${part.mimeType})`}
            </span>
          )}
        </li>
      ))}
    </ul>
  );
}

function line(event: RunEvent): string | null {
  switch (event.type) {
    case 'step.started':
      return 'started';
    case 'model.completed': {
      const said = event.content.trim() || (event.toolCalls.length > 0 ? `calls ${event.toolCalls.join(', ')}` : '(nothing)');
      return `model: ${said} — ${event.promptTokens} + ${event.completionTokens} tokens${event.attempts > 1 ? `, ${event.attempts} attempts` : ''}`;
    }
    case 'model.attempt_failed':
      return `model attempt ${event.attempt} failed: ${event.error}`;
    case 'injection.suspected':
      return `⚠ ${event.tool} ${JSON.stringify(event.args)}`;
    case 'tool.started':
      return `→ ${event.tool} ${JSON.stringify(event.args)}`;
    case 'tool.completed':
      return `← ${event.tool} [${event.status}] ${event.content}`;
    case 'tool.refused':
      return `✕ ${event.tool} refused${event.by === 'operator' ? ' by the operator' : ''}: ${event.reason}`;
    case 'approval.requested':
      return `? ${event.kind}: ${event.summary}`;
    case 'approval.resolved':
      return `  ${event.status}${event.decision.verdict === 'reject' ? `: ${event.decision.feedback}` : ''}`;
    case 'step.completed':
      return `result: ${event.result}`;
    case 'step.failed':
      return `failed: ${event.reason}`;
    case 'step.skipped':
      return `skipped: ${event.reason}`;
    case 'validation.completed':
      return `verdict: ${event.verdict}, gap ${event.gap.toFixed(2)}${event.reasons.length > 0 ? ` — ${event.reasons.join('; ')}` : ''}`;
    case 'step.retried':
      return `repair ${event.repair}: ${event.reason}`;
    default:
      return null;
  }
}

type Suspected = Extract<RunEvent, { type: 'injection.suspected' }>;

/** The calls announced as possibly injected, by call id, and the calls that since started or were refused. */
function injectionsOf(events: readonly RunEvent[]): { suspected: Map<string, Suspected>; settled: Set<string> } {
  const suspected = new Map<string, Suspected>();
  const settled = new Set<string>();
  for (const event of events) {
    if (event.type === 'injection.suspected') suspected.set(event.callId, event);
    else if (event.type === 'tool.started' || event.type === 'tool.refused') settled.add(event.callId);
  }
  return { suspected, settled };
}

/**
 * A possibly injected call is marked once, with its reasons: on the line that says how it ended (it started or was
 * refused), or on its announcement while it waits at its approval.
 */
function markOf(event: RunEvent, suspected: ReadonlyMap<string, Suspected>) {
  if (event.type === 'injection.suspected') return <InjectionMark tool={event.tool} injection={event} />;
  if (event.type !== 'tool.started' && event.type !== 'tool.refused') return null;
  const announced = suspected.get(event.callId) ?? null;
  const refusedAsInjected = event.type === 'tool.refused' && event.code === 'possible_injection';
  return announced || refusedAsInjected ? <InjectionMark tool={event.tool} injection={announced} /> : null;
}

/** One step's events as trace lines: model turns, tool calls with arguments and results, approvals, verdicts. */
export function StepTrace({ stepId, events }: { stepId: string; events: readonly RunEvent[] }) {
  const own = events.filter((event) => 'stepId' in event && event.stepId === stepId);
  const { suspected, settled } = injectionsOf(own);
  const shown = own.filter((event) => event.type !== 'injection.suspected' || !settled.has(event.callId));
  return (
    <ol className="trace">
      {shown.map((event) => {
        const text = line(event);
        return text ? (
          <li key={event.seq}>
            <time dateTime={event.ts}>{new Date(event.ts).toLocaleTimeString()}</time> {text}
            {markOf(event, suspected)}
            {event.type === 'tool.completed' && event.parts && <ResultParts tool={event.tool} parts={event.parts} />}
          </li>
        ) : null;
      })}
    </ol>
  );
}
