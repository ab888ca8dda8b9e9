import type { EndpointProbe } from '../../../../shared/schemas/endpoint';
import type { McpProbe } from '../../../../shared/schemas/mcp-probe';
import type { McpServerConfig, Settings, SettingsPatch } from '../../../../shared/schemas/settings';
import type { CommandOutput } from '../../../../shared/ipc/contract';
import type { SliceContext } from '../../store/slice';

export interface SettingsSlice {
  settings: Settings | null;
  info: CommandOutput<'app.info'> | null;
  /** The last test of each MCP server by name: under way, or its tools or failure. */
  mcpProbes: Record<string, McpProbe | 'testing'>;
  /** The last test of each role's model server by role name. */
  roleProbes: Record<string, RoleProbe>;
  /** The last change sent from the page: under way, saved, or refused with the reason. */
  settingsSave: SettingsSave | null;
  updateSettings(patch: SettingsPatch): Promise<void>;
  testRole(name: string, modelUrl: string, model: string): Promise<void>;
  testMcpServer(name: string, config: McpServerConfig): Promise<void>;
}

export type SettingsSave = { state: 'saving' } | { state: 'saved' } | { state: 'failed'; message: string };

export type RoleProbe = { state: 'testing' } | { state: 'reached'; probe: EndpointProbe } | { state: 'failed'; message: string };

export function createSettingsSlice({ set, get, client, attempt }: SliceContext): SettingsSlice {
  let saves = 0;
  const setProbe = (name: string, probe: McpProbe | 'testing' | null) => {
    const { [name]: _previous, ...others } = get().mcpProbes;
    set({ mcpProbes: probe ? { ...others, [name]: probe } : others });
  };
  return {
    settings: null,
    info: null,
    mcpProbes: {},
    roleProbes: {},
    settingsSave: null,
    async testRole(name, modelUrl, model) {
      const setRoleProbe = (probe: RoleProbe) => set({ roleProbes: { ...get().roleProbes, [name]: probe } });
      setRoleProbe({ state: 'testing' });
      try {
        setRoleProbe({ state: 'reached', probe: await client.commands['endpoint.probe']({ modelUrl, ...(model ? { model } : {}) }) });
      } catch (error) {
        setRoleProbe({ state: 'failed', message: error instanceof Error ? error.message : String(error) });
      }
    },
    async updateSettings(patch) {
      // Saves in flight together: only the last one's reply is the settings as they now are.
      const save = ++saves;
      set({ settingsSave: { state: 'saving' } });
      try {
        const settings = await client.commands['settings.update'](patch);
        if (save === saves) set({ settings, settingsSave: { state: 'saved' } });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        set({ error: message, ...(save === saves ? { settingsSave: { state: 'failed', message } } : {}) });
        return;
      }
      // The run defaults the composer offers come from the settings just saved.
      await attempt(async () => set({ info: await client.commands['app.info']() }));
    },
    testMcpServer: (name, config) =>
      attempt(async () => {
        setProbe(name, 'testing');
        try {
          setProbe(name, await client.commands['mcp.probe']({ name, config }));
        } catch (error) {
          setProbe(name, null);
          throw error;
        }
      }),
  };
}
