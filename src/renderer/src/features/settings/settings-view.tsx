import { useId, useState } from 'react';
import { endpointSummary } from '../../../../shared/endpoint-summary';
import { isBuiltinModelUrl, MODEL_PRESETS } from '../../../../shared/model-presets';
import { PolicySchema, VerificationSchema, type Policy } from '../../../../shared/schemas/run';
import { ThemeSchema, type Settings } from '../../../../shared/schemas/settings';
import type { CommandOutput } from '../../../../shared/ipc/contract';
import { BUILTIN_TOOL_NAMES, TOOL_CATALOGUE, type BuiltinToolName, type BuiltinToolSpec } from '../../../../shared/tools/catalogue';
import { useAppStore } from '../../store/use-app-store';
import { ClusterSettings } from './cluster-settings';
import { McpServerSettings } from './mcp-server-settings';
import { ModelPriceSettings } from './model-price-settings';
import { RoleSettings } from './role-settings';
import { SettingsSaveStatus } from './settings-save-status';
import { ToolTable, type ToolRowSpec } from './tool-table';

type AppInfo = CommandOutput<'app.info'>;
type HostFlag = AppInfo['hostFlags'][number];
const FLAG_NAMES: Partial<Record<HostFlag, string>> = { modelUrl: '--model-url', model: '--model', policy: '--policy' };

/** Which settings the host's command line fixed, and the note that says so beside them. */
function useHostFlags(info: AppInfo | null) {
  const fixed = (flag: HostFlag) => info?.hostFlags.includes(flag) ?? false;
  const noteId = useId();
  const note = (flag: HostFlag) =>
    fixed(flag) && (
      <p className="span-2 host-flag" id={`${noteId}-${flag}`}>
        Set by this host's <code>{FLAG_NAMES[flag]}</code> flag: runs started here use it. Restart <code>archon serve</code> without the flag to change it here.
      </p>
    );
  const describedBy = (flag: HostFlag) => (fixed(flag) ? `${noteId}-${flag}` : undefined);
  return { fixed, note, describedBy };
}

function ModelProvider({ settings, info }: { settings: Settings; info: AppInfo | null }) {
  const updateSettings = useAppStore((state) => state.updateSettings);
  const probeEndpoint = useAppStore((state) => state.probeEndpoint);
  const probe = useAppStore((state) => state.probe);
  const probing = useAppStore((state) => state.probing);
  const host = useHostFlags(info);
  const effective = { modelUrl: host.fixed('modelUrl') && info ? info.runDefaults.modelUrl : settings.modelUrl, model: host.fixed('model') && info ? info.runDefaults.model : settings.model };
  const [url, setUrl] = useState(effective.modelUrl);
  const [apiKey, setApiKey] = useState('');
  const ids = { url: useId(), model: useId(), preset: useId(), context: useId(), apiKey: useId(), keyNote: useId() };
  return (
    <fieldset>
      <legend>Model provider</legend>
      <label htmlFor={ids.preset}>Preset</label>
      <select
        id={ids.preset}
        disabled={host.fixed('modelUrl')}
        value={Object.entries(MODEL_PRESETS).find(([, presetUrl]) => presetUrl === url)?.[0] ?? ''}
        onChange={(event) => {
          const next = MODEL_PRESETS[event.target.value as keyof typeof MODEL_PRESETS];
          if (next) {
            setUrl(next);
            void updateSettings({ modelUrl: next });
          }
        }}
      >
        <option value="">custom</option>
        {Object.keys(MODEL_PRESETS).map((name) => (
          <option key={name}>{name}</option>
        ))}
      </select>
      {isBuiltinModelUrl(url) ? (
        <p>Archon&rsquo;s built-in engine runs the model below itself, on this machine: no server to start. Models lists what it can run.</p>
      ) : (
        <>
          <label htmlFor={ids.url}>Model server URL</label>
          <input
            id={ids.url}
            value={url}
            readOnly={host.fixed('modelUrl')}
            aria-describedby={host.describedBy('modelUrl')}
            onChange={(event) => setUrl(event.target.value)}
            onBlur={() => !host.fixed('modelUrl') && void updateSettings({ modelUrl: url })}
          />
        </>
      )}
      {host.note('modelUrl')}
      <label htmlFor={ids.model}>Model</label>
      <input
        id={ids.model}
        defaultValue={effective.model}
        readOnly={host.fixed('model')}
        aria-describedby={host.describedBy('model')}
        onBlur={(event) => !host.fixed('model') && void updateSettings({ model: event.target.value })}
      />
      {host.note('model')}
      <label htmlFor={ids.context}>Context length (tokens)</label>
      <input
        id={ids.context}
        inputMode="numeric"
        defaultValue={settings.contextLength ?? ''}
        placeholder="as the server reports"
        onBlur={(event) => void updateSettings({ contextLength: event.target.value.trim() === '' ? null : Number(event.target.value) })}
      />
      <label htmlFor={ids.apiKey}>API key (kept for this server only)</label>
      <input id={ids.apiKey} type="password" autoComplete="off" aria-describedby={ids.keyNote} value={apiKey} onChange={(event) => setApiKey(event.target.value)} />
      <p className="span-2 host-flag" id={ids.keyNote}>
        Saved for this model server when you press Test connection; runs against it use it. It is never shown again.
        {info?.keyStorageNote ? ` ${info.keyStorageNote}` : ''}
      </p>
      <span />
      <button
        type="button"
        disabled={probing}
        onClick={() => {
          setApiKey('');
          void probeEndpoint(url, effective.model || undefined, apiKey || undefined);
        }}
      >
        Test connection
      </button>
      {probe && (
        <p role="status" className="probe span-2">
          Reached {probe.baseUrl}: models {probe.models.join(', ') || 'none listed'}; {endpointSummary(probe)}.
          {probe.reason && <> Why: {probe.reason}.</>}
        </p>
      )}
    </fieldset>
  );
}

/** A network tool is off while network tools are, whatever its own switch says. */
function builtinToolRow(name: BuiltinToolName, settings: Settings): ToolRowSpec {
  const spec: BuiltinToolSpec = TOOL_CATALOGUE[name];
  const blocked = spec.needsNetwork && !settings.networkTools;
  return { name, effects: spec.sideEffects, ...(blocked ? { blockedBy: 'network tools are off; turn them on above to use it.' } : {}) };
}

function ToolSettings({ settings }: { settings: Settings }) {
  const updateSettings = useAppStore((state) => state.updateSettings);
  return (
    <fieldset>
      <legend>Tools</legend>
      <label className="inline span-2">
        <input type="checkbox" checked={settings.networkTools} onChange={(event) => void updateSettings({ networkTools: event.target.checked })} /> Network tools (http_get); off for offline use
      </label>
      <ToolTable settings={settings} label="Built-in tools" tools={BUILTIN_TOOL_NAMES.map((name) => builtinToolRow(name, settings))} />
    </fieldset>
  );
}

export function SettingsView() {
  const settings = useAppStore((state) => state.settings);
  const info = useAppStore((state) => state.info);
  const updateSettings = useAppStore((state) => state.updateSettings);
  const ids = { policy: useId(), verification: useId(), theme: useId() };
  const host = useHostFlags(info);
  if (!settings) return <p className="empty">Loading settings…</p>;
  return (
    <section aria-labelledby="settings-heading" className="view">
      <h1 id="settings-heading">Settings</h1>
      <form className="settings-form" onSubmit={(event) => event.preventDefault()}>
        <ModelProvider settings={settings} info={info} />
        <fieldset>
          <legend>Policy and appearance</legend>
          <label htmlFor={ids.policy}>Default policy</label>
          <select
            id={ids.policy}
            value={host.fixed('policy') && info ? info.runDefaults.policy : settings.policy}
            disabled={host.fixed('policy')}
            aria-describedby={host.describedBy('policy')}
            onChange={(event) => void updateSettings({ policy: event.target.value as Policy })}
          >
            {PolicySchema.options.map((policy) => (
              <option key={policy}>{policy}</option>
            ))}
          </select>
          {host.note('policy')}
          <label htmlFor={ids.verification}>Verification of step results</label>
          <select id={ids.verification} value={settings.verification} onChange={(event) => void updateSettings({ verification: event.target.value as Settings['verification'] })}>
            {VerificationSchema.options.map((mode) => (
              <option key={mode}>{mode}</option>
            ))}
          </select>
          <label htmlFor={ids.theme}>Theme</label>
          <select id={ids.theme} value={settings.theme} onChange={(event) => void updateSettings({ theme: event.target.value as Settings['theme'] })}>
            {ThemeSchema.options.map((theme) => (
              <option key={theme}>{theme}</option>
            ))}
          </select>
          <span>Data folder</span>
          <code>{info?.dataDir ?? '…'}</code>
        </fieldset>
        <ModelPriceSettings settings={settings} />
        <ToolSettings settings={settings} />
        <ClusterSettings settings={settings} />
        <McpServerSettings settings={settings} />
        <RoleSettings settings={settings} />
      </form>
      <SettingsSaveStatus />
    </section>
  );
}
