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
  updateSettings(patch: SettingsPatch): Promise<void>;
  testRole(name: string, modelUrl: string, model: string): Promise<void>;
  testMcpServer(name: string, config: McpServerConfig): Promise<void>;
}

export type RoleProbe = { state: 'testing' } | { state: 'reached'; probe: EndpointProbe } | { state: 'failed'; message: string };

export function createSettingsSlice({ set, get, client, attempt }: SliceContext): SettingsSlice {
  const setProbe = (name: string, probe: McpProbe | 'testing' | null) => {
    const { [name]: _previous, ...others } = get().mcpProbes;
    set({ mcpProbes: probe ? { ...others, [name]: probe } : others });
  };
  return {
    settings: null,
    info: null,
    mcpProbes: {},
    roleProbes: {},
    async testRole(name, modelUrl, model) {
      const setRoleProbe = (probe: RoleProbe) => set({ roleProbes: { ...get().roleProbes, [name]: probe } });
      setRoleProbe({ state: 'testing' });
      try {
        setRoleProbe({ state: 'reached', probe: await client.commands['endpoint.probe']({ modelUrl, ...(model ? { model } : {}) }) });
      } catch (error) {
        setRoleProbe({ state: 'failed', message: error instanceof Error ? error.message : String(error) });
      }
    },
    updateSettings: (patch) => attempt(async () => set({ settings: await client.commands['settings.update'](patch) })),
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
