import { useId } from 'react';
import { ToolApprovalOverrideSchema, type Settings, type ToolApprovalOverride } from '../../../../shared/schemas/settings';
import { useAppStore } from '../../store/use-app-store';

export interface ToolRowSpec {
  name: string;
  /** The side-effect class, and anything else worth knowing about the tool (idempotent, what it does). */
  effects: string;
  /** Why the tool cannot be on whatever its own setting says, and what turns it on. */
  blockedBy?: string;
}

function EnabledCell({ name, blockedBy, enabled, toggle, whyId }: { name: string; blockedBy?: string; enabled: boolean; toggle(enabled: boolean): void; whyId: string }) {
  if (!blockedBy) return <input type="checkbox" aria-label={`${name} enabled`} checked={enabled} onChange={(event) => toggle(event.target.checked)} />;
  return (
    <>
      <input type="checkbox" aria-label={`${name} enabled`} checked={false} disabled aria-describedby={whyId} />{' '}
      <span id={whyId} className="hint">
        Off: {blockedBy}
      </span>
    </>
  );
}

/** Tools as rows: each can be turned off and set to ask every time, never, or as the policy says. */
export function ToolTable({ settings, tools, label }: { settings: Settings; tools: readonly ToolRowSpec[]; label: string }) {
  const updateSettings = useAppStore((state) => state.updateSettings);
  const tableId = useId();
  const toggle = (name: string, enabled: boolean) =>
    void updateSettings({ disabledTools: enabled ? settings.disabledTools.filter((tool) => tool !== name) : [...settings.disabledTools, name] });
  const setApproval = (name: string, value: ToolApprovalOverride) => void updateSettings({ toolApproval: { ...settings.toolApproval, [name]: value } });
  return (
    <table className="tool-table span-2" aria-label={label}>
      <thead>
        <tr>
          <th scope="col">Tool</th>
          <th scope="col">Side effects</th>
          <th scope="col">On</th>
          <th scope="col">Ask before use</th>
        </tr>
      </thead>
      <tbody>
        {tools.map(({ name, effects, blockedBy }) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td>{effects}</td>
            <td>
              <EnabledCell name={name} blockedBy={blockedBy} enabled={!settings.disabledTools.includes(name)} toggle={(enabled) => toggle(name, enabled)} whyId={`${tableId}-${name}-why`} />
            </td>
            <td>
              <select aria-label={`${name} approval`} value={settings.toolApproval[name] ?? 'default'} onChange={(event) => setApproval(name, event.target.value as ToolApprovalOverride)}>
                {ToolApprovalOverrideSchema.options.map((option) => (
                  <option key={option} value={option}>
                    {option === 'default' ? 'as the policy says' : option}
                  </option>
                ))}
              </select>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
