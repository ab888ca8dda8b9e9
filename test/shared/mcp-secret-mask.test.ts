import { describe, expect, it } from 'vitest';
import { MASKED_SECRET, maskMcpSecrets, unmaskMcpServer, unmaskMcpServers } from '../../src/shared/mcp-secret-mask';
import { DEFAULT_SETTINGS, type Settings } from '../../src/shared/schemas/settings';

const saved: Settings['mcpServers'] = {
  local: { command: 'server', args: ['--port', '1'], env: { API_KEY: 'sk-local-secret' } },
  remote: { url: 'https://mcp.example/mcp', headers: { Authorization: 'Bearer remote-secret' } },
  plain: { command: 'plain' },
};

describe('MCP secrets at the page boundary', () => {
  it('masks every env and header value and nothing else', () => {
    const masked = maskMcpSecrets({ ...DEFAULT_SETTINGS, mcpServers: saved });
    expect(masked.mcpServers).toEqual({
      local: { command: 'server', args: ['--port', '1'], env: { API_KEY: MASKED_SECRET } },
      remote: { url: 'https://mcp.example/mcp', headers: { Authorization: MASKED_SECRET } },
      plain: { command: 'plain' },
    });
    expect(JSON.stringify(masked)).not.toContain('secret');
  });

  it('puts saved values back for masked ones and keeps values typed anew', () => {
    const back = unmaskMcpServers(
      { local: { command: 'server', args: ['--port', '1'], env: { API_KEY: MASKED_SECRET, MORE: 'typed' } }, remote: { url: 'https://mcp.example/other-path', headers: { Authorization: MASKED_SECRET } } },
      saved,
    );
    expect(back).toEqual({
      local: { command: 'server', args: ['--port', '1'], env: { API_KEY: 'sk-local-secret', MORE: 'typed' } },
      remote: { url: 'https://mcp.example/other-path', headers: { Authorization: 'Bearer remote-secret' } },
    });
  });

  it('never sends saved values to another origin, command or arguments: they must be typed again', () => {
    expect(() => unmaskMcpServer('remote', { url: 'https://attacker.example/mcp', headers: { Authorization: MASKED_SECRET } }, saved)).toThrow(
      "remote's URL origin changed, so its saved values are not sent to it: type mcpServers.remote.headers.Authorization again.",
    );
    expect(() => unmaskMcpServer('local', { command: 'curl', args: ['--port', '1'], env: { API_KEY: MASKED_SECRET } }, saved)).toThrow(/local's command or arguments changed.*mcpServers\.local\.env\.API_KEY again/);
    expect(() => unmaskMcpServer('local', { command: 'server', args: ['--port', '2'], env: { API_KEY: MASKED_SECRET } }, saved)).toThrow(/command or arguments changed/);
    expect(unmaskMcpServer('local', { command: 'curl', env: { API_KEY: 'typed again' } }, saved)).toEqual({ command: 'curl', env: { API_KEY: 'typed again' } });
  });

  it('refuses a masked value with nothing saved behind it, naming the field', () => {
    expect(() => unmaskMcpServer('fresh', { command: 'x', env: { TOKEN: MASKED_SECRET } }, saved)).toThrow('mcpServers.fresh.env.TOKEN is masked but nothing is saved for it: type its value.');
  });
});
