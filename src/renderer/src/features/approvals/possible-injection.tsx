import { useId } from 'react';
import { PossibleInjectionSchema, type ApprovalRequest, type PossibleInjection } from '../../../../shared/schemas/approval';

type ReasonKind = PossibleInjection['reasons'][number]['kind'];

const REASON_WORDS: Record<ReasonKind, string> = {
  secret: 'It would carry a secret out',
  from_untrusted: 'It uses a name taken from that text',
  outside_plan: 'It reaches a place the goal and the plan do not name',
};

/** Why a tool call's approval says it may have been steered by untrusted text, or null when it does not. */
export function possibleInjectionOf(request: ApprovalRequest): PossibleInjection | null {
  if (request.kind !== 'tool_call' || typeof request.action !== 'object' || request.action === null) return null;
  const parsed = PossibleInjectionSchema.safeParse((request.action as { injection?: unknown }).injection);
  return parsed.success ? parsed.data : null;
}

/** "This call follows text read from a, b", each source as written. */
function Sources({ sources }: { sources: readonly string[] }) {
  if (sources.length === 0) return <>This call follows text read from an untrusted source.</>;
  return (
    <>
      This call follows text read from{' '}
      {sources.map((source, index) => (
        <span key={index}>
          {index > 0 && ', '}
          <code>{source}</code>
        </span>
      ))}
      .
    </>
  );
}

function InjectionReasons({ injection, label }: { injection: PossibleInjection; label: string }) {
  return (
    <ul className="injection-reasons" aria-label={label}>
      {injection.reasons.map((reason, index) => (
        <li key={index}>
          <strong>{REASON_WORDS[reason.kind]}</strong>: {reason.text}
        </li>
      ))}
    </ul>
  );
}

/** What leads an approval of a possibly injected call: the untrusted sources it follows and each reason, in words. */
export function InjectionWarning({ injection }: { injection: PossibleInjection }) {
  const headingId = useId();
  return (
    <section className="injection-warning" role="alert" aria-labelledby={headingId}>
      <h3 id={headingId}>Possibly injected</h3>
      <p>
        <Sources sources={injection.sources} /> Approve it only if you meant it to happen; it cannot be allowed for the rest of the run.
      </p>
      <InjectionReasons injection={injection} label="Why it may be injected" />
    </section>
  );
}

/** A trace line's mark for a call that may be injected, with its sources and reasons when they were announced. */
export function InjectionMark({ tool, injection }: { tool: string; injection: PossibleInjection | null }) {
  return (
    <div className="injection-mark">
      <strong className="injection-badge">possible injection</strong>
      {injection && (
        <>
          {' '}
          <Sources sources={injection.sources} />
          <InjectionReasons injection={injection} label={`Why ${tool} may be injected`} />
        </>
      )}
    </div>
  );
}
