import { useId, useState } from 'react';
import { checkMcpConfigText } from '../../../../shared/mcp-config-check';
import { MASKED_SECRET } from '../../../../shared/mcp-secret-mask';
import type { McpToolSummary } from '../../../../shared/schemas/mcp-probe';
import type { McpServerConfig, Settings } from '../../../../shared/schemas/settings';
import { useAppStore } from '../../store/use-app-store';
import { ToolTable } from './tool-table';

function toolRow(tool: McpToolSummary) {
  return { name: tool.registeredName, effects: `${tool.sideEffects}${tool.idempotent ? ', idempotent' : ''}` };
}

/** One configured server: Test starts it and lists its tools, each with the usual on/off and approval. */
function McpServer({ name, config, settings }: { name: string; config: McpServerConfig; settings: Settings }) {
  const probe = useAppStore((state) => state.mcpProbes[name]);
  const testMcpServer = useAppStore((state) => state.testMcpServer);
  return (
    <section className="mcp-server span-2" aria-label={`MCP server ${name}`}>
      <h2>
        {name} <code>{'command' in config ? [config.command, ...(config.args ?? [])].join(' ') : config.url}</code>
        {config.disabled && ' (off)'}
      </h2>
      <button type="button" disabled={probe === 'testing'} onClick={() => void testMcpServer(name, config)}>
        Test {name}
      </button>
      {probe === 'testing' && <p role="status">Starting {name} and listing its tools…</p>}
      {probe && probe !== 'testing' && !probe.ok && (
        <p role="status" className="invalid">
          {name} failed ({probe.failure.kind.replace('_', ' ')}): {probe.failure.message}
        </p>
      )}
      {probe && probe !== 'testing' && probe.ok && (
        <>
          <p role="status">
            {name} offers {probe.tools.length} tools.
          </p>
          <ToolTable settings={settings} label={`Tools of ${name}`} tools={probe.tools.map(toolRow)} />
        </>
      )}
    </section>
  );
}

/** The JSON as the page last saw it saved; editing starts from it again after every save. */
function McpEditor({ settings, saved }: { settings: Settings; saved: string }) {
  const updateSettings = useAppStore((state) => state.updateSettings);
  const [text, setText] = useState(saved);
  const ids = { editor: useId(), status: useId() };
  const check = checkMcpConfigText(text);
  return (
    <>
      <label htmlFor={ids.editor} className="span-2">
        MCP servers JSON
      </label>
      <textarea
        id={ids.editor}
        className="span-2 mcp-json"
        rows={12}
        spellCheck={false}
        value={text}
        aria-invalid={!check.ok}
        aria-describedby={ids.status}
        onChange={(event) => setText(event.target.value)}
      />
      <div id={ids.status} role="status" className={`span-2 ${check.ok ? 'valid' : 'invalid'}`}>
        {check.ok ? (
          `Valid: ${Object.keys(check.servers).length} servers. Values in env and headers show as ${MASKED_SECRET}; left so, they keep what is saved.`
        ) : (
          <ul className="problems">
            {check.problems.map((problem) => (
              <li key={problem}>{problem}</li>
            ))}
          </ul>
        )}
      </div>
      <span />
      <button type="button" disabled={!check.ok || text === saved} onClick={() => check.ok && void updateSettings({ mcpServers: check.servers })}>
        Save MCP servers
      </button>
      {check.ok && Object.entries(check.servers).map(([name, config]) => <McpServer key={name} name={name} config={config} settings={settings} />)}
    </>
  );
}

/** MCP servers in the `{"mcpServers": {…}}` JSON Claude Desktop and Cursor write, checked as you type. */
export function McpServerSettings({ settings }: { settings: Settings }) {
  const saved = JSON.stringify({ mcpServers: settings.mcpServers }, null, 2);
  return (
    <fieldset>
      <legend>MCP servers</legend>
      <McpEditor key={saved} settings={settings} saved={saved} />
    </fieldset>
  );
}
