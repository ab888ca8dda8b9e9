import { useId, useState } from 'react';
import { endpointSummary } from '../../../../shared/endpoint-summary';
import { BUILT_IN_ROLES, RoleNameSchema, StoredRoleSchema, type StoredRole } from '../../../../shared/schemas/roles';
import type { Settings } from '../../../../shared/schemas/settings';
import { BUILTIN_TOOL_NAMES } from '../../../../shared/tools/catalogue';
import { useAppStore } from '../../store/use-app-store';

/** A role as its form holds it: text fields as typed, tools as "all" or the ticked names. */
interface RoleForm {
  description: string;
  url: string;
  model: string;
  allTools: boolean;
  tools: string[];
  systemPrompt: string;
  maxConcurrency: string;
}

function formOf(role: StoredRole | undefined): RoleForm {
  return {
    description: role?.description ?? '',
    url: role?.model?.url ?? '',
    model: role?.model?.name ?? '',
    allTools: (role?.tools ?? 'all') === 'all',
    tools: role && role.tools !== 'all' ? role.tools : [],
    systemPrompt: role?.systemPrompt ?? '',
    maxConcurrency: role?.maxConcurrency === undefined ? '' : String(role.maxConcurrency),
  };
}

/** The role the form describes, or what is wrong with it in words. */
function roleOf(form: RoleForm): { ok: true; role: StoredRole } | { ok: false; problems: string[] } {
  const parsed = StoredRoleSchema.safeParse({
    description: form.description,
    tools: form.allTools ? 'all' : form.tools,
    ...(form.url.trim() ? { model: { url: form.url.trim(), name: form.model.trim() } } : {}),
    ...(form.systemPrompt.trim() ? { systemPrompt: form.systemPrompt } : {}),
    ...(form.maxConcurrency.trim() ? { maxConcurrency: Number(form.maxConcurrency) } : {}),
  });
  return parsed.success ? { ok: true, role: parsed.data } : { ok: false, problems: parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`) };
}

function RoleProbeStatus({ name }: { name: string }) {
  const probe = useAppStore((state) => state.roleProbes[name]);
  if (!probe) return null;
  return (
    <p role="status" className={`probe span-2${probe.state === 'failed' ? ' invalid' : ''}`}>
      {probe.state === 'testing' && `Testing the server of ${name}…`}
      {probe.state === 'failed' && `The server of ${name} failed the test: ${probe.message}`}
      {probe.state === 'reached' &&
        `${name} reached ${probe.probe.baseUrl}: models ${probe.probe.models.join(', ') || 'none listed'}; ${endpointSummary(probe.probe)}.${probe.probe.reason ? ` Why: ${probe.probe.reason}.` : ''}`}
    </p>
  );
}

/** One role: what it is for, its model server, its tools, its prompt addition and concurrency; Save, Test its server, Remove. */
function RoleEditor({ name, saved, settings }: { name: string; saved: StoredRole | undefined; settings: Settings }) {
  const updateSettings = useAppStore((state) => state.updateSettings);
  const testRole = useAppStore((state) => state.testRole);
  const testing = useAppStore((state) => state.roleProbes[name]?.state === 'testing');
  const runDefaults = useAppStore((state) => state.info?.runDefaults ?? settings);
  const [form, setForm] = useState(() => formOf(saved));
  const ids = { description: useId(), url: useId(), model: useId(), prompt: useId(), concurrency: useId(), status: useId() };
  const edit = (change: Partial<RoleForm>) => setForm({ ...form, ...change });
  const checked = roleOf(form);
  const toolChoices = [...new Set([...BUILTIN_TOOL_NAMES, ...form.tools])];
  const builtIn = (BUILT_IN_ROLES as readonly string[]).includes(name);
  return (
    <section className="role span-2" aria-label={`Role ${name}`}>
      <h2>
        {name}
        {builtIn && !saved && ' (uses the run’s model and tools)'}
      </h2>
      <label htmlFor={ids.description}>{name} description</label>
      <textarea id={ids.description} rows={2} value={form.description} onChange={(event) => edit({ description: event.target.value })} />
      <label htmlFor={ids.url}>{name} server URL</label>
      <input id={ids.url} value={form.url} placeholder="the run’s model server" onChange={(event) => edit({ url: event.target.value })} />
      <label htmlFor={ids.model}>{name} model name</label>
      <input id={ids.model} value={form.model} placeholder="the server’s model" onChange={(event) => edit({ model: event.target.value })} />
      <span>{name} tools</span>
      <div className="role-tools">
        <label className="inline">
          <input type="checkbox" checked={form.allTools} onChange={(event) => edit({ allTools: event.target.checked })} /> {name}: all tools
        </label>
        {!form.allTools &&
          toolChoices.map((tool) => (
            <label key={tool} className="inline">
              <input type="checkbox" checked={form.tools.includes(tool)} onChange={(event) => edit({ tools: event.target.checked ? [...form.tools, tool] : form.tools.filter((other) => other !== tool) })} /> {name} may use {tool}
            </label>
          ))}
      </div>
      <label htmlFor={ids.prompt}>{name} system prompt addition</label>
      <textarea id={ids.prompt} rows={3} value={form.systemPrompt} onChange={(event) => edit({ systemPrompt: event.target.value })} />
      <label htmlFor={ids.concurrency}>{name} max concurrency</label>
      <input id={ids.concurrency} inputMode="numeric" value={form.maxConcurrency} placeholder="as its server allows" aria-invalid={!checked.ok} aria-describedby={checked.ok ? undefined : ids.status} onChange={(event) => edit({ maxConcurrency: event.target.value })} />
      {!checked.ok && (
        <ul id={ids.status} className="problems invalid span-2">
          {checked.problems.map((problem) => (
            <li key={problem}>{problem}</li>
          ))}
        </ul>
      )}
      <div className="role-actions span-2">
        <button type="button" disabled={!checked.ok} onClick={() => checked.ok && void updateSettings({ roles: { ...settings.roles, [name]: checked.role } })}>
          Save role {name}
        </button>
        <button type="button" disabled={testing} onClick={() => void testRole(name, form.url.trim() || runDefaults.modelUrl, form.url.trim() ? form.model.trim() : runDefaults.model)}>
          Test role {name}
        </button>
        {saved && (
          <button type="button" onClick={() => void updateSettings({ roles: Object.fromEntries(Object.entries(settings.roles).filter(([other]) => other !== name)) })}>
            Remove role {name}
          </button>
        )}
      </div>
      <RoleProbeStatus name={name} />
    </section>
  );
}

/** The role registry: the built-in roles and the operator's specialists, each with its own model server and tools. */
export function RoleSettings({ settings }: { settings: Settings }) {
  const [added, setAdded] = useState<string[]>([]);
  const [newName, setNewName] = useState('');
  const newNameId = useId();
  const names = [...new Set([...BUILT_IN_ROLES, ...Object.keys(settings.roles), ...added])];
  const validName = RoleNameSchema.safeParse(newName.trim()).success && !names.includes(newName.trim());
  return (
    <fieldset>
      <legend>Roles</legend>
      <p className="span-2">Planning uses the planner, verdicts the critic, steps the executor or the specialist the plan names. A role without a server uses the run’s model.</p>
      {names.map((name) => (
        <RoleEditor key={`${name} ${JSON.stringify(settings.roles[name] ?? null)}`} name={name} saved={settings.roles[name]} settings={settings} />
      ))}
      <label htmlFor={newNameId}>New role name</label>
      <input id={newNameId} value={newName} onChange={(event) => setNewName(event.target.value)} />
      <span />
      <button
        type="button"
        disabled={!validName}
        onClick={() => {
          setAdded([...added, newName.trim()]);
          setNewName('');
        }}
      >
        Add role
      </button>
    </fieldset>
  );
}
