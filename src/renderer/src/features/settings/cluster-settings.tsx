import { useId, useState } from 'react';
import { ClusterSettingSchema } from '../../../../shared/schemas/run';
import type { Settings } from '../../../../shared/schemas/settings';
import { useAppStore } from '../../store/use-app-store';

/** Restate's own addresses on this machine. */
const DEFAULTS = { ingress: 'http://127.0.0.1:8080', admin: 'http://127.0.0.1:9070' } as const;

/** Where runs started here send their built-in tool calls: this machine's tool processes, or the workers of a Restate cluster. */
export function ClusterSettings({ settings }: { settings: Settings }) {
  const updateSettings = useAppStore((state) => state.updateSettings);
  const [form, setForm] = useState({ ingress: settings.cluster?.ingress ?? DEFAULTS.ingress, admin: settings.cluster?.admin ?? DEFAULTS.admin, secretFile: settings.cluster?.secretFile ?? '' });
  const ids = { ingress: useId(), admin: useId(), secretFile: useId(), note: useId() };
  const cluster = ClusterSettingSchema.safeParse(form);
  const field = (name: keyof typeof form) => ({ id: ids[name], value: form[name], onChange: (event: { target: { value: string } }) => setForm({ ...form, [name]: event.target.value.trim() }) });
  return (
    <fieldset>
      <legend>Engine</legend>
      <p className="span-2" id={ids.note}>
        {settings.cluster
          ? `Runs started here send their built-in tool calls to the workers of the Restate cluster at ${settings.cluster.ingress}; planning, model calls, approvals and the audit stay here.`
          : "Runs started here run their tool calls in this machine's tool processes. A Restate cluster's workers can run them instead (docs/scale-out.md)."}
      </p>
      <label htmlFor={ids.ingress}>Restate ingress</label>
      <input {...field('ingress')} inputMode="url" aria-invalid={!ClusterSettingSchema.shape.ingress.safeParse(form.ingress).success} />
      <label htmlFor={ids.admin}>Restate admin API</label>
      <input {...field('admin')} inputMode="url" aria-invalid={!ClusterSettingSchema.shape.admin.safeParse(form.admin).success} />
      <label htmlFor={ids.secretFile}>Cluster secret file</label>
      <input {...field('secretFile')} placeholder="/home/you/.config/archon/cluster-secret" />
      <span />
      <button type="button" aria-describedby={ids.note} disabled={!cluster.success} onClick={() => cluster.success && void updateSettings({ cluster: cluster.data })}>
        Use the Restate cluster
      </button>
      <span />
      <button type="button" disabled={settings.cluster === null} onClick={() => void updateSettings({ cluster: null })}>
        Use this machine
      </button>
    </fieldset>
  );
}
