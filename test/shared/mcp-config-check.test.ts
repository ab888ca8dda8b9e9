import { describe, expect, it } from 'vitest';
import { checkMcpConfigText } from '../../src/shared/mcp-config-check';

describe('checkMcpConfigText', () => {
  it('takes the Claude Desktop / Cursor shape: stdio and URL servers', () => {
    const text = JSON.stringify({
      mcpServers: {
        everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], env: { TOKEN: 'x' } },
        remote: { url: 'https://mcp.example/mcp', headers: { Authorization: 'Bearer y' }, disabled: true },
      },
    });
    expect(checkMcpConfigText(text)).toEqual({
      ok: true,
      servers: {
        everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], env: { TOKEN: 'x' } },
        remote: { url: 'https://mcp.example/mcp', headers: { Authorization: 'Bearer y' }, disabled: true },
      },
    });
  });

  it('names the path of each bad field and what to put there', () => {
    const check = checkMcpConfigText(
      JSON.stringify({ mcpServers: { 'bad name': { command: 'x' }, neither: { args: ['a'] }, typo: { command: 'x', argz: [] }, web: { url: 'ftp://x' }, num: { command: 'x', args: [1] } } }),
    );
    expect(check.ok).toBe(false);
    const problems = check.ok ? [] : check.problems;
    expect(problems).toContainEqual(expect.stringMatching(/^mcpServers\.bad name: A server name is 1-32 letters/));
    expect(problems).toContainEqual(expect.stringMatching(/^mcpServers\.neither: give either "command".*or "url"/));
    expect(problems).toContainEqual(expect.stringMatching(/^mcpServers\.typo: .*argz/));
    expect(problems).toContainEqual(expect.stringMatching(/^mcpServers\.web\.url: /));
    expect(problems).toContainEqual(expect.stringMatching(/^mcpServers\.num\.args\.0: .*string/));
  });

  it('says when the text is not JSON or not the mcpServers shape', () => {
    expect(checkMcpConfigText('{"mcpServers": {')).toEqual({ ok: false, problems: [expect.stringMatching(/^Not valid JSON \(.+\): check quotes/)] });
    for (const text of ['null', '[]', '{"servers": {}}', '{"mcpServers": []}']) {
      expect(checkMcpConfigText(text), text).toEqual({ ok: false, problems: [expect.stringMatching(/^mcpServers: expected \{"mcpServers"/)] });
    }
  });
});
