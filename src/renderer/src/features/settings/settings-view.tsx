import { useId, useState } from 'react';
import { endpointSummary } from '../../../../shared/endpoint-summary';
import { MODEL_PRESETS } from '../../../../shared/model-presets';
import { PolicySchema, VerificationSchema, type Policy } from '../../../../shared/schemas/run';
import { ThemeSchema, type Settings } from '../../../../shared/schemas/settings';
import { BUILTIN_TOOL_NAMES, TOOL_CATALOGUE } from '../../../../shared/tools/catalogue';
import { useAppStore } from '../../store/use-app-store';
import { McpServerSettings } from './mcp-server-settings';
import { ModelPriceSettings } from './model-price-settings';
import { ToolTable } from './tool-table';

function ModelProvider({ settings }: { settings: Settings }) {
  const updateSettings = useAppStore((state) => state.updateSettings);
  const probeEndpoint = useAppStore((state) => state.probeEndpoint);
  const probe = useAppStore((state) => state.probe);
  const probing = useAppStore((state) => state.probing);
  const [url, setUrl] = useState(settings.modelUrl);
  const [apiKey, setApiKey] = useState('');
  const ids = { url: useId(), model: useId(), preset: useId(), context: useId(), apiKey: useId() };
  return (
    <fieldset>
      <legend>Model provider</legend>
      <label htmlFor={ids.preset}>Preset</label>
      <select
        id={ids.preset}
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
      <label htmlFor={ids.url}>Model server URL</label>
      <input id={ids.url} value={url} onChange={(event) => setUrl(event.target.value)} onBlur={() => void updateSettings({ modelUrl: url })} />
      <label htmlFor={ids.model}>Model</label>
      <input id={ids.model} defaultValue={settings.model} onBlur={(event) => void updateSettings({ model: event.target.value })} />
      <label htmlFor={ids.context}>Context length (tokens)</label>
      <input
        id={ids.context}
        inputMode="numeric"
        defaultValue={settings.contextLength ?? ''}
        placeholder="as the server reports"
        onBlur={(event) => void updateSettings({ contextLength: event.target.value.trim() === '' ? null : Number(event.target.value) })}
      />
      <label htmlFor={ids.apiKey}>API key (kept for this server only)</label>
      <input id={ids.apiKey} type="password" autoComplete="off" value={apiKey} onChange={(event) => setApiKey(event.target.value)} />
      <span />
      <button
        type="button"
        disabled={probing}
        onClick={() => {
          setApiKey('');
          void probeEndpoint(url, settings.model || undefined, apiKey || undefined);
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

function ToolSettings({ settings }: { settings: Settings }) {
  const updateSettings = useAppStore((state) => state.updateSettings);
  return (
    <fieldset>
      <legend>Tools</legend>
      <label className="inline span-2">
        <input type="checkbox" checked={settings.networkTools} onChange={(event) => void updateSettings({ networkTools: event.target.checked })} /> Network tools (http_get); off for offline use
      </label>
      <ToolTable settings={settings} label="Built-in tools" tools={BUILTIN_TOOL_NAMES.map((name) => ({ name, effects: TOOL_CATALOGUE[name].sideEffects }))} />
    </fieldset>
  );
}

export function SettingsView() {
  const settings = useAppStore((state) => state.settings);
  const info = useAppStore((state) => state.info);
  const updateSettings = useAppStore((state) => state.updateSettings);
  const ids = { policy: useId(), verification: useId(), theme: useId() };
  if (!settings) return <p className="empty">Loading settings…</p>;
  return (
    <section aria-labelledby="settings-heading" className="view">
      <h1 id="settings-heading">Settings</h1>
      <form className="settings-form" onSubmit={(event) => event.preventDefault()}>
        <ModelProvider settings={settings} />
        <fieldset>
          <legend>Policy and appearance</legend>
          <label htmlFor={ids.policy}>Default policy</label>
          <select id={ids.policy} value={settings.policy} onChange={(event) => void updateSettings({ policy: event.target.value as Policy })}>
            {PolicySchema.options.map((policy) => (
              <option key={policy}>{policy}</option>
            ))}
          </select>
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
        <McpServerSettings settings={settings} />
      </form>
    </section>
  );
}
