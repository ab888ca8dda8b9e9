import { useId, useMemo, useState } from 'react';
import type { RunEvent } from '../../../../shared/schemas/events';
import { agentNames, busChoices, busMessagesOf, filterMessages, messageSteps, planOf } from './bus-model';

/** A message's body: a plan as its list of steps, anything else as the text it is. */
function MessageBody({ body }: { body: string }) {
  const plan = planOf(body);
  if (!plan) return <p className="bus-body">{body}</p>;
  return (
    <ol className="bus-body bus-plan" aria-label="Plan">
      {plan.map((step) => (
        <li key={step.id}>
          <strong>{step.id}</strong>: {step.description}
          {step.dependencies.length > 0 && <span className="bus-plan-after"> (after {step.dependencies.join(', ')})</span>}
        </li>
      ))}
    </ol>
  );
}

interface BusViewProps {
  events: readonly RunEvent[];
  selectedStepId: string | null;
  onSelectStep(id: string): void;
}

/** Every message between the run's agents, oldest first, filtered by an agent (sender or recipient) and a topic; each links to its step. */
export function BusView({ events, selectedStepId, onSelectStep }: BusViewProps) {
  const messages = useMemo(() => busMessagesOf(events), [events]);
  const steps = useMemo(() => messageSteps(events), [events]);
  const choices = useMemo(() => busChoices(messages), [messages]);
  const names = useMemo(() => agentNames(events), [events]);
  const nameOf = (agent: string) => names.get(agent) ?? agent;
  // A topic `agent:<id>` is that agent's inbox: named as the agent is.
  const topicName = (name: string) => (name.startsWith('agent:') ? `to ${nameOf(name.slice('agent:'.length))}` : name);
  const [agent, setAgent] = useState('');
  const [topic, setTopic] = useState('');
  const shown = filterMessages(messages, { agent: agent || null, topic: topic || null });
  const ids = { agent: useId(), topic: useId() };
  return (
    <section className="bus" aria-label="Bus">
      <div className="bus-filters">
        <label htmlFor={ids.agent}>Agent</label>
        <select id={ids.agent} value={agent} onChange={(event) => setAgent(event.target.value)}>
          <option value="">all agents</option>
          {choices.agents.map((agentId) => (
            <option key={agentId} value={agentId}>
              {nameOf(agentId)}
            </option>
          ))}
        </select>
        <label htmlFor={ids.topic}>Topic</label>
        <select id={ids.topic} value={topic} onChange={(event) => setTopic(event.target.value)}>
          <option value="">all topics</option>
          {choices.topics.map((name) => (
            <option key={name} value={name}>
              {topicName(name)}
            </option>
          ))}
        </select>
        <span role="status">
          {shown.length} of {messages.length} messages
        </span>
      </div>
      {messages.length === 0 ? (
        <p className="empty">No messages on the bus yet.</p>
      ) : (
        <ol className="bus-timeline" aria-label="Bus messages">
          {shown.map((message) => {
            const step = steps.get(message.id);
            return (
              <li key={message.id} className={`bus-message kind-${message.kind}${step !== undefined && step === selectedStepId ? ' selected' : ''}`} data-message-id={message.id} data-step-id={step}>
                <div className="bus-message-head">
                  <time dateTime={message.ts}>{new Date(message.ts).toLocaleTimeString()}</time>
                  <span className="bus-kind">{message.kind}</span>
                  <span>
                    {nameOf(message.from)} → {nameOf(message.to)}
                  </span>
                  {message.topic !== `agent:${message.to}` && <code>{topicName(message.topic)}</code>}
                  {step !== undefined && (
                    <button type="button" className="link" onClick={() => onSelectStep(step)}>
                      Go to step {step}
                    </button>
                  )}
                </div>
                <MessageBody body={message.body} />
              </li>
            );
          })}
        </ol>
      )}
    </section>
  );
}
