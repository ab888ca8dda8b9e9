import type { Detection } from '../shared/schemas/audit';
import type { RunEvent } from '../shared/schemas/events';
import { isBuiltinTool, TOOL_CATALOGUE, TRUSTED_RESULT_TOOLS } from '../shared/tools/catalogue';
import type { AuditedEvent } from './detectors';

/*
 * Injection defence by construction: the runtime flags a call that untrusted text may have steered
 * (`injection.suspected`), and the auditor names each one with how it was answered. It does not take
 * the runtime's word alone: a call with side effects that passes a name only an untrusted result of
 * its step held, and neither the goal nor the plan, is named too when the runtime did not flag it.
 */

type Event<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;
type Of<T extends RunEvent['type']> = AuditedEvent & { event: Event<T> };

const cite = (item: AuditedEvent) => ({ record: item.seq, event: item.event.type, eventSeq: item.event.seq });
const is = <T extends RunEvent['type']>(type: T) => (item: AuditedEvent): item is Of<T> => item.event.type === type;
const clip = (text: string) => (text.length > 120 ? `${text.slice(0, 117)}...` : text);

const MIN_NAME = 12;
const URL_PATTERN = /\bhttps?:\/\/[^\s"'<>`()[\]{}]+/gi;
const EMAIL_PATTERN = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;
const FILE_PATTERN = /[\w~./-]*[\w-]\.[a-z][a-z0-9]{0,7}\b/gi;

function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(stringsOf);
  return [];
}

/** The URLs, e-mail addresses and file-like names (with an extension) of 12 characters or more the text holds. */
function namesIn(text: string): string[] {
  const urls = (text.match(URL_PATTERN) ?? []).map((url) => url.replace(/[.,;:!?]+$/, ''));
  const emails = text.replace(URL_PATTERN, ' ').match(EMAIL_PATTERN) ?? [];
  const files = text.replace(URL_PATTERN, ' ').replace(EMAIL_PATTERN, ' ').match(FILE_PATTERN) ?? [];
  return [...new Set([...urls, ...emails, ...files])].filter((name) => name.length >= MIN_NAME);
}

const ANSWERS: Record<Event<'approval.resolved'>['status'], string> = {
  pending: 'has not answered',
  approved: 'approved it',
  edited: 'approved it edited',
  rejected: 'rejected it',
  locked: 'rejected it and locked a constraint',
  stopped: 'stopped the run',
  expired: 'did not answer in time',
};

/** How the flagged call was answered: the refusal or start naming its call id, and the answer to the approval that followed it. */
function answerTo(flag: Of<'injection.suspected'>, after: readonly AuditedEvent[]): { text: string; evidence: AuditedEvent[] } {
  const { callId, stepId, tool } = flag.event;
  const at = after.findIndex((item) => (item.event.type === 'tool.started' || item.event.type === 'tool.refused') && item.event.callId === callId);
  const ran = after[at];
  if (ran?.event.type === 'tool.refused' && ran.event.by === 'rule') return { text: 'It was refused by rule: a rule never approves a possibly injected call.', evidence: [ran] };
  // The runtime asks right after it flags, and the call starts or is refused once answered.
  const asked = (at >= 0 ? after.slice(0, at) : after).filter(is('approval.requested')).find(({ event }) => event.kind === 'tool_call' && event.stepId === stepId && (event.action as { tool?: unknown } | null)?.tool === tool);
  const resolved = asked && after.filter(is('approval.resolved')).find((item) => item.event.approvalId === asked.event.approvalId);
  const outcome = ran?.event.type === 'tool.started' ? 'it ran' : ran ? 'it did not run' : 'it has not run';
  const evidence = [resolved ?? asked, ran].filter((item) => item !== undefined);
  if (!asked) return { text: `No approval was asked of the operator, and ${outcome}.`, evidence };
  const channel = resolved?.event.channel ? ` (${resolved.event.channel})` : '';
  return { text: `The operator was asked and ${ANSWERS[resolved?.event.status ?? 'pending']}${channel}; ${outcome}.`, evidence };
}

/** possible_injection: a high finding for each call the runtime flagged. */
function flaggedFindings(events: readonly AuditedEvent[]): Detection[] {
  return events.flatMap((item, index): Detection[] => {
    if (!is('injection.suspected')(item)) return [];
    const { tool, stepId, sources, reasons } = item.event;
    const answer = answerTo(item, events.slice(index + 1));
    const from = sources.length > 0 ? ` It followed text read from ${sources.join(', ')}.` : '';
    return [
      {
        detector: 'injection',
        severity: 'high',
        title: `Possible prompt injection: ${tool} call${sources[0] ? ` after text read from ${clip(sources[0])}` : ''}`,
        explanation: `The runtime flagged a ${tool} call of step ${stepId} as possibly steered by untrusted text: ${reasons.map((reason) => `${reason.text} (${reason.kind})`).join('; ')}.${from} ${answer.text}`,
        evidence: [cite(item), ...answer.evidence.map(cite)],
      },
    ];
  });
}

/** The words of the run's goal and plans, lower-cased: what the operator asked for. */
function operatorWords(events: readonly AuditedEvent[]): string {
  return events
    .flatMap(({ event }) => (event.type === 'run.started' ? [event.goal] : event.type === 'plan.ready' || event.type === 'plan.revised' ? stringsOf(event.plan) : []))
    .join('\n')
    .toLowerCase();
}

const sideEffectsOf = (event: Event<'tool.started'>) => (isBuiltinTool(event.tool) ? TOOL_CATALOGUE[event.tool].sideEffects : (event.sideEffects ?? 'irreversible'));

/** possible_injection (unflagged): a call with side effects passing names an earlier untrusted result of its step held, and the operator did not give. */
function unflaggedFindings(events: readonly AuditedEvent[]): Detection[] {
  const flagged = new Set(events.filter(is('injection.suspected')).map((item) => item.event.callId));
  const words = operatorWords(events);
  const results: Of<'tool.completed'>[] = [];
  const judged = new Set<string>();
  const findings: Detection[] = [];
  for (const item of events) {
    if (is('tool.completed')(item) && item.event.status === 'success' && !TRUSTED_RESULT_TOOLS.has(item.event.tool)) results.push(item);
    if (!is('tool.started')(item) || sideEffectsOf(item.event) === 'none' || flagged.has(item.event.callId) || judged.has(item.event.callId)) continue;
    judged.add(item.event.callId);
    const { stepId, tool } = item.event;
    const ofStep = results.filter((result) => result.event.stepId === stepId);
    const taken = namesIn(stringsOf(item.event.args).join('\n'))
      .filter((name) => !words.includes(name.toLowerCase()))
      .flatMap((name) => {
        const source = ofStep.find((result) => result.event.content.toLowerCase().includes(name.toLowerCase()));
        return source ? [{ name, source }] : [];
      });
    if (taken.length === 0) continue;
    const first = taken[0] as (typeof taken)[number];
    findings.push({
      detector: 'injection',
      severity: 'high',
      title: `Possible prompt injection not flagged by the runtime: ${tool} call passes "${clip(first.name)}" from a ${first.source.event.tool} result`,
      explanation: `Step ${stepId} started ${tool} (side effects: ${sideEffectsOf(item.event)}) with ${taken.map(({ name, source }) => `"${clip(name)}", which the ${source.event.tool} result of call ${source.event.callId} held`).join('; ')}; neither the goal nor the plan names it, and the runtime raised no injection.suspected for this call.`,
      evidence: [...new Set(taken.map(({ source }) => source))].map(cite).concat(cite(item)),
    });
  }
  return findings;
}

/** Both kinds of possible_injection findings of one run. */
export function injectionFindings(events: readonly AuditedEvent[]): Detection[] {
  return [...flaggedFindings(events), ...unflaggedFindings(events)];
}
