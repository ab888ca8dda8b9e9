import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mcpProbeWidening, runWidening, scheduleWidening, settingsWidening } from '../../../src/core/authority/widening-changes';
import { DEFAULT_SETTINGS, type Settings } from '../../../src/shared/schemas/settings';
import { BUILTIN_MODEL_URL } from '../../../src/shared/model-presets';

const current: Settings = { ...DEFAULT_SETTINGS, policy: 'balanced', toolApproval: { write_file: 'always' }, disabledTools: ['run_command'] };

describe('settingsWidening', () => {
  it('names each change that lets agents do more', () => {
    expect(
      settingsWidening(current, {
        policy: 'permissive',
        toolApproval: { write_file: 'default', run_command: 'never' },
        disabledTools: [],
        networkTools: true,
        allowNetwork: true,
        sandbox: 'off',
      }),
    ).toEqual([
      'policy from balanced to the looser permissive',
      'approval of write_file from "always" to "default"',
      'approval of run_command from "default" to "never"',
      'the tool run_command turned on',
      'network tools turned on',
      'network access for commands turned on',
      'the sandbox for commands turned off',
    ]);
  });

  it('lets narrowing and neutral changes through without asking', () => {
    expect(
      settingsWidening(current, {
        policy: 'supervised',
        toolApproval: { write_file: 'always', read_file: 'always' },
        disabledTools: ['run_command', 'write_file'],
        networkTools: false,
        allowNetwork: false,
        sandbox: 'on',
        theme: 'dark',
        model: 'other',
      }),
    ).toEqual([]);
  });

  it('asks before tool calls go to a Restate cluster, or to another one; not when they come back or only the secret file moves', () => {
    const cluster = { ingress: 'http://desk.lan:8080', admin: 'http://desk.lan:9070', secretFile: '/etc/archon/secret' };
    expect(settingsWidening(current, { cluster })).toEqual(['built-in tool calls sent to the workers of the Restate cluster at http://desk.lan:8080']);
    expect(settingsWidening({ ...current, cluster }, { cluster: { ...cluster, ingress: 'http://elsewhere:8080' } })).toEqual(['built-in tool calls sent to the workers of the Restate cluster at http://elsewhere:8080']);
    expect(settingsWidening({ ...current, cluster }, { cluster: { ...cluster, secretFile: '/etc/archon/other' } })).toEqual([]);
    expect(settingsWidening({ ...current, cluster }, { cluster: null })).toEqual([]);
  });

  it('asks when an MCP server is added, turned on or changed; not when one is removed or turned off', () => {
    const servers: Settings = { ...current, mcpServers: { a: { command: 'a' }, b: { command: 'b', disabled: true }, c: { url: 'https://c.example/mcp' }, d: { command: 'd' } } };
    expect(
      settingsWidening(servers, { mcpServers: { a: { command: 'a' }, b: { command: 'b' }, c: { url: 'https://c.example/other' }, e: { command: 'e' }, f: { command: 'f', disabled: true } } }),
    ).toEqual(['the MCP server b turned on', 'the MCP server c changed (now URL https://c.example/other)', 'the MCP server e added (command "e")']);
    expect(settingsWidening(servers, { mcpServers: { a: { command: 'a', disabled: true } } })).toEqual([]);
  });

  it('counts dropping a tool from the approval list as going back to the default', () => {
    expect(settingsWidening(current, { toolApproval: {} })).toEqual(['approval of write_file from "always" to "default"']);
  });
});

describe('MCP servers', () => {
  const withServers: Settings = {
    ...DEFAULT_SETTINGS,
    mcpServers: { files: { command: 'npx', args: ['server-filesystem', '.'], env: { TOKEN: 'secret-1' } }, web: { url: 'https://mcp.example/mcp', disabled: true } },
  };

  it('asks before a server is added, turned on, or pointed at another command, and never names its env', () => {
    const changes = settingsWidening(withServers, {
      mcpServers: {
        files: { command: 'npx', args: ['server-filesystem', '/'], env: { TOKEN: 'secret-1' } },
        web: { url: 'https://mcp.example/mcp' },
        everything: { command: 'mcp-server-everything', env: { KEY: 'secret-2' } },
      },
    });
    expect(changes).toEqual([
      'the MCP server files changed (now command "npx server-filesystem /")',
      'the MCP server web turned on',
      'the MCP server everything added (command "mcp-server-everything")',
    ]);
    expect(changes.join(' ')).not.toContain('secret');
  });

  it('lets removing, disabling, adding a disabled server and re-saving the same servers through', () => {
    expect(settingsWidening(withServers, { mcpServers: {} })).toEqual([]);
    expect(settingsWidening(withServers, { mcpServers: { files: { ...withServers.mcpServers.files!, disabled: true }, other: { url: 'https://x.example/', disabled: true } } })).toEqual([]);
    expect(settingsWidening(withServers, { mcpServers: { ...withServers.mcpServers } })).toEqual([]);
  });

  it('starts a saved server for a test without asking, and asks for any other', () => {
    expect(mcpProbeWidening(withServers, 'files', { command: 'npx', args: ['server-filesystem', '.'], env: { TOKEN: 'secret-1' } })).toEqual([]);
    expect(mcpProbeWidening({ ...withServers, mcpServers: { plain: { command: 'x', env: {} } } }, 'plain', { command: 'x', args: [] })).toEqual([]);
    expect(mcpProbeWidening(withServers, 'files', { command: 'rm', args: ['-rf', '.'] })).toEqual(['start the MCP server files (command "rm -rf .") to list its tools']);
    expect(mcpProbeWidening(withServers, 'new', { url: 'https://mcp.example/mcp' })).toEqual(['start the MCP server new (URL https://mcp.example/mcp) to list its tools']);
  });
});

describe('settingsWidening of roles', () => {
  const withRoles: Settings = { ...current, roles: { coder: { description: '', tools: ['read_file'], model: { url: 'http://127.0.0.1:8001/v1', name: 'small' } }, critic: { description: '', tools: 'all' } } };

  it('asks for a role added with tools or a server, given more tools, or pointed at another server', () => {
    expect(
      settingsWidening(withRoles, {
        roles: {
          coder: { description: 'writes code', tools: ['read_file', 'write_file'], model: { url: 'http://127.0.0.1:9009/v1', name: 'small' } },
          critic: { description: '', tools: 'all' },
          tester: { description: '', tools: 'all' },
        },
      }),
    ).toEqual(['the role coder given the tools write_file', 'the role coder pointed at another model server (model server http://127.0.0.1:9009/v1)', 'the role tester added with all tools']);
    expect(settingsWidening(withRoles, { roles: { ...withRoles.roles, coder: { description: '', tools: 'all', model: { url: 'http://127.0.0.1:8001/v1', name: 'big' } } } })).toEqual(['the role coder given all tools']);
  });

  it('lets fewer tools, another model name on the same server, a removed role or a new role without tools or server through', () => {
    expect(
      settingsWidening(withRoles, { roles: { coder: { description: 'd', tools: [], model: { url: 'http://127.0.0.1:8001/v1', name: 'other' } }, quiet: { description: '', tools: [] } } }),
    ).toEqual([]);
  });
});

describe('runWidening', () => {
  const defaults = { workspace: '/home/op/project', policy: 'strict' as const, modelUrl: 'http://127.0.0.1:11434/v1', maxTokens: 10_000, maxCostUsd: 2, concurrency: 4 };

  it('asks for another workspace or a looser policy than the defaults', () => {
    expect(runWidening(defaults, { workspace: '/', policy: 'balanced' })).toEqual(['workspace / instead of /home/op/project', 'policy balanced, looser than strict']);
    expect(runWidening(defaults, { workspace: '/home/op/project/../other' })).toEqual(['workspace /home/op/other instead of /home/op/project']);
  });

  it('asks for another model server, or a budget or limit raised or taken away; not for a tighter one', () => {
    expect(runWidening(defaults, { modelUrl: 'https://elsewhere.example/v1', maxTokens: null, maxCostUsd: 5, concurrency: 8 })).toEqual([
      'model server https://elsewhere.example/v1 instead of http://127.0.0.1:11434/v1',
      'token cap none instead of 10000',
      'cost cap (USD) 5 instead of 2',
      '8 steps at once instead of 4',
    ]);
    expect(runWidening(defaults, { modelUrl: defaults.modelUrl, maxTokens: 500, maxCostUsd: 1, concurrency: 1 })).toEqual([]);
  });

  it("does not ask for Archon's own built-in engine: prompts stay in a process of Archon's on this machine", () => {
    expect(runWidening(defaults, { modelUrl: BUILTIN_MODEL_URL })).toEqual([]);
  });

  it('lets the default workspace, a folder inside it, and a stricter policy through', () => {
    expect(runWidening(defaults, {})).toEqual([]);
    expect(runWidening(defaults, { workspace: '/home/op/project/sub', policy: 'supervised' })).toEqual([]);
  });

  it('sees through a link inside the default workspace that leads elsewhere', () => {
    const workspace = mkdtempSync(join(tmpdir(), 'archon-widening-'));
    try {
      symlinkSync('/', join(workspace, 'escape'));
      expect(runWidening({ ...defaults, workspace }, { workspace: join(workspace, 'escape') })).toEqual([`workspace / instead of ${workspace}`]);
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  });
});

describe('scheduleWidening', () => {
  const defaults = { workspace: tmpdir(), policy: 'balanced' as const, modelUrl: 'http://127.0.0.1:11434/v1', maxTokens: 10_000, maxCostUsd: null, concurrency: null };
  it('asks when its runs would answer every approval yes, or go beyond the defaults as a run would; not for a schedule whose runs ask a person or say no', () => {
    expect(scheduleWidening(defaults, { goal: 'g', cron: '0 7 * * *', approve: 'auto', options: {} })).toEqual(['every approval its runs ask answered yes, on the cron "0 7 * * *", with nobody at the desk']);
    expect(scheduleWidening(defaults, { goal: 'g', cron: '0 7 * * *', approve: 'desk', options: { policy: 'permissive', maxTokens: null } })).toEqual(['policy permissive, looser than balanced', 'token cap none instead of 10000']);
    expect(scheduleWidening(defaults, { goal: 'g', cron: '0 7 * * *', approve: 'deny', options: { maxTokens: 500 } })).toEqual([]);
  });
});
