import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ApprovalChannel } from '../../../src/core/approval/approval-channel';
import { MAX_ELICITATIONS_PER_CALL } from '../../../src/core/mcp/elicitation';
import { isSecretName } from '../../../src/core/secrets/mcp-secrets';
import { ToolRegistry } from '../../../src/core/tools/tool-registry';
import { planReply, toolMessagesOf } from '../../kit/scripted-model-server';
import { useEngine } from '../../support/engine';
import { useMcpToolsets } from '../../support/mcp-toolsets';

/*
 * The red-team attack: a server's form asks for a passphrase, an OTP, a PIN and a card number (names
 * the secret-field rule missed, so the answers were stored in clear), and one call asks 8 times.
 */

const PRYING_SERVER = fileURLToPath(new URL('../../fixtures/mcp/prying-server.mjs', import.meta.url));
const startEngine = useEngine();
const toolsetOf = useMcpToolsets();

const TYPED = { name: 'Ada Lovelace', passphrase: 'correct-horse-battery', otp: '914273', pin: '4821', credit_card: '4111111111111111' };

async function pryingTools() {
  return (await toolsetOf({ prying: { command: process.execPath, args: [PRYING_SERVER] } })).tools;
}

describe('a server that elicits credentials, again and again, in one call', () => {
  it('passphrase, otp, pin and credit_card are stored and announced blanked; after 5 the rest are declined and the call says why', async () => {
    const tools = await pryingTools();
    const approvals: ApprovalChannel = { canRaiseBudgets: false, decide: async (request) => (request.kind === 'elicitation' ? { verdict: 'edit', edited: TYPED } : { verdict: 'approve' }) };
    const engine = await startEngine(
      {
        reply: (request) => {
          if (request.purpose === 'plan') return planReply([{ id: 'pry', description: 'answer the server' }]);
          if (request.purpose === 'final') return { content: 'done' };
          return toolMessagesOf(request).length === 0 ? { toolCalls: [{ name: 'prying__pry', arguments: {} }] } : { content: 'answered' };
        },
      },
      { tools: (builtin) => new ToolRegistry([...builtin.names().flatMap((name) => builtin.get(name) ?? []), ...tools]), approvals },
    );
    const result = await engine.run('answer the prying server');
    expect(result.status).toBe('completed');

    const asked = engine.events.filter((event) => event.type === 'approval.requested' && event.kind === 'elicitation');
    expect(asked).toHaveLength(MAX_ELICITATIONS_PER_CALL);
    const resolved = engine.events.filter((event) => event.type === 'approval.resolved');
    expect(resolved).toContainEqual(expect.objectContaining({ decision: { verdict: 'edit', edited: { name: 'Ada Lovelace', passphrase: '[redacted]', otp: '[redacted]', pin: '[redacted]', credit_card: '[redacted]' } } }));

    const toolMessage = toolMessagesOf(engine.server.requests.find((request) => request.purpose === 'step' && toolMessagesOf(request).length > 0) as never)[0];
    expect(toolMessage).toContain(`accepted ${MAX_ELICITATIONS_PER_CALL} of 8`);
    expect(toolMessage).toContain(`MCP server "prying" asked for input 8 times in this call; Archon put the first ${MAX_ELICITATIONS_PER_CALL} to the operator and declined the other 3 without asking.`);

    const everything = JSON.stringify(engine.events) + readFileSync(join(engine.runtime.dataDir, 'archon.db')).toString('latin1');
    for (const secret of [TYPED.passphrase, TYPED.otp, TYPED.credit_card, '"4821"']) expect(everything).not.toContain(secret);
  }, 120_000);

  it('one rule for env names and form fields: credential words count whole, so a spinner or a path is not a secret', () => {
    for (const name of ['passphrase', 'otp', 'pin', 'credit_card', 'creditCardNumber', 'cvv', 'ssn', 'mfa_code', 'API_TOKEN', 'DB_PASSWORD', 'GITHUB_PAT_PASS']) expect(isSecretName(name), name).toBe(true);
    for (const name of ['name', 'NODE_ENV', 'DATA_ROOT', 'spinner', 'pinned_version', 'options', 'email']) expect(isSecretName(name), name).toBe(false);
  });
});
