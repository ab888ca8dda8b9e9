import { useId } from 'react';
import { PolicySchema, type Policy } from '../../../../shared/schemas/run';
import { ThemeSchema, type Settings } from '../../../../shared/schemas/settings';
import { useAppStore } from '../../store/use-app-store';

export function SettingsView() {
  const settings = useAppStore((state) => state.settings);
  const updateSettings = useAppStore((state) => state.updateSettings);
  const ids = { url: useId(), model: useId(), policy: useId(), theme: useId() };
  if (!settings) return <p className="empty">Loading settings…</p>;
  return (
    <section aria-labelledby="settings-heading" className="view">
      <h1 id="settings-heading">Settings</h1>
      <form className="settings-form" onSubmit={(event) => event.preventDefault()}>
        <label htmlFor={ids.url}>Model server URL</label>
        <input
          id={ids.url}
          defaultValue={settings.modelUrl}
          onBlur={(event) => void updateSettings({ modelUrl: event.target.value })}
        />
        <label htmlFor={ids.model}>Model</label>
        <input id={ids.model} defaultValue={settings.model} onBlur={(event) => void updateSettings({ model: event.target.value })} />
        <label htmlFor={ids.policy}>Default policy</label>
        <select
          id={ids.policy}
          value={settings.policy}
          onChange={(event) => void updateSettings({ policy: event.target.value as Policy })}
        >
          {PolicySchema.options.map((policy) => (
            <option key={policy}>{policy}</option>
          ))}
        </select>
        <label htmlFor={ids.theme}>Theme</label>
        <select
          id={ids.theme}
          value={settings.theme}
          onChange={(event) => void updateSettings({ theme: event.target.value as Settings['theme'] })}
        >
          {ThemeSchema.options.map((theme) => (
            <option key={theme}>{theme}</option>
          ))}
        </select>
      </form>
    </section>
  );
}
