import { EndpointProbeSchema, type EndpointProbe } from '../../shared/schemas/endpoint';
import { parseJsonOrUndefined } from '../../shared/json';
import type { SqliteDatabase } from '../store/open-database';

/** How long a probe's findings stand for the same server and model before a run probes again. */
export const PROBE_LIFETIME_MS = 10 * 60_000;

/** What a probe was asked: the server, the model (empty: the server's first), and the operator's context length for servers that report none. */
export interface ProbeKey {
  baseUrl: string;
  model: string;
  contextSetting: number | null;
}

/**
 * The last probe of each server and model, in archon.db (`endpoint_probes`), so a run within the
 * lifetime of another's probe sends no probe request. A call that fails for a reason the probe
 * would have caught forgets it.
 */
export class ProbeCache {
  constructor(
    private readonly db: SqliteDatabase,
    private readonly lifetimeMs = PROBE_LIFETIME_MS,
    private readonly now: () => Date = () => new Date(),
  ) {}

  get(key: ProbeKey): EndpointProbe | null {
    const row = this.db
      .prepare('SELECT probe_json, probed_at FROM endpoint_probes WHERE base_url = ? AND model = ? AND context_setting IS ?')
      .get(key.baseUrl, key.model, key.contextSetting) as { probe_json: string; probed_at: string } | undefined;
    if (!row) return null;
    const age = this.now().getTime() - Date.parse(row.probed_at);
    if (!(age >= 0 && age < this.lifetimeMs)) return null;
    const parsed = EndpointProbeSchema.safeParse(parseJsonOrUndefined(row.probe_json));
    return parsed.success ? parsed.data : null;
  }

  put(key: ProbeKey, probe: EndpointProbe): void {
    this.db
      .prepare(
        `INSERT INTO endpoint_probes (base_url, model, context_setting, probe_json, probed_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (base_url, model) DO UPDATE SET context_setting = excluded.context_setting, probe_json = excluded.probe_json, probed_at = excluded.probed_at`,
      )
      .run(key.baseUrl, key.model, key.contextSetting, JSON.stringify(probe), this.now().toISOString());
  }

  /** Every probe of this server that settled on `model`, or was asked for it. */
  forget(baseUrl: string, model: string): void {
    this.db.prepare("DELETE FROM endpoint_probes WHERE base_url = ? AND (model = ? OR json_extract(probe_json, '$.model') = ?)").run(baseUrl, model, model);
  }
}
