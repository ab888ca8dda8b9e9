import type { Locator } from 'playwright-core';
import { describe, expect, it, vi } from 'vitest';
import { axeViolations } from '../../../support/axe';
import { planReply, toolMessagesOf, type ScriptedReply } from '../../../kit/scripted-model-server';
import { ArchonStore } from '../../../../src/core/store/archon-store';
import { useServe } from '../../../support/archon-process';
import { useBrowser } from '../../../support/browser';
import { everythingStdio, seeDefinitions } from '../../../support/mcp-servers';
import { useModelServers } from '../../../support/model-servers';
import { useTempDirs } from '../../../support/temp-dir';

// A browser, a host, a run and an MCP server on a loaded 2-core machine running the whole suite: the bound is against hangs, not a speed target.
vi.setConfig({ testTimeout: 120_000 });

const tempDir = useTempDirs();
const startServe = useServe();
const launchBrowser = useBrowser();
const startServer = useModelServers();
/** The model's turns in the step: echo (asks, by setting), the tiny image, a resource link, the elicitation twice (answered, declined), then done. */
function stepReply(tools: number): ScriptedReply {
  const calls: ScriptedReply[] = [
    { toolCalls: [{ name: 'everything__echo', arguments: { message: 'hello from the model' } }] },
    { toolCalls: [{ name: 'everything__get-tiny-image', arguments: {} }] },
    { toolCalls: [{ name: 'everything__get-resource-links', arguments: { count: 1 } }] },
    { toolCalls: [{ name: 'everything__trigger-elicitation-request', arguments: {} }] },
    { toolCalls: [{ name: 'everything__trigger-elicitation-request', arguments: {} }] },
  ];
  return calls[tools] ?? { content: 'all done' };
}

const definitionOf = (dialog: Locator, term: string) => dialog.locator('dt', { hasText: new RegExp(`^${term}$`) }).locator('xpath=following-sibling::dd[1]');

describe('an MCP server in a run, in Chromium through archon serve', () => {
  it('shows the call with its definition and arguments, asks the server\'s question as a form (Submit answers, Decline declines), and shows the image and resource it returned', async () => {
    const model = await startServer({
      reply: (request) => {
        if (request.purpose === 'plan') return planReply([{ id: 'mcp', description: 'use the everything server' }]);
        if (request.purpose === 'final') return { content: 'finished' };
        return stepReply(toolMessagesOf(request).length);
      },
    });
    const dataDir = tempDir();
    const store = ArchonStore.open(dataDir);
    const workspace = tempDir();
    await seeDefinitions(store, { everything: everythingStdio() }, workspace);
    store.updateSettings({
      mcpServers: { everything: everythingStdio() },
      toolApproval: { everything__echo: 'always', 'everything__get-tiny-image': 'never', 'everything__get-resource-links': 'never', 'everything__trigger-elicitation-request': 'never' },
    });
    store.close();
    const serve = await startServe(dataDir, ['--model-url', model.url, '--workspace', workspace]);
    const page = await (await launchBrowser()).newPage({ viewport: { width: 1400, height: 900 } });
    page.setDefaultTimeout(60_000);
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    await page.goto(serve.url.href);
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor();
    await page.getByLabel('Goal').fill('Try the everything server');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByRole('dialog', { name: 'Approval: plan' }).getByRole('button', { name: 'Approve' }).click();

    const call = page.getByRole('dialog', { name: 'Approval: tool call' });
    await call.waitFor();
    expect(await definitionOf(call, 'Server').textContent()).toBe('everything');
    expect(await definitionOf(call, 'Tool').textContent()).toBe('echo');
    expect(await definitionOf(call, 'Description').textContent()).toBe('Echoes back the input string');
    expect(await definitionOf(call, 'Side effects').textContent()).toBe('none');
    expect(await definitionOf(call, 'Read-only').textContent()).toBe('yes');
    expect(await definitionOf(call, 'Destructive').textContent()).toBe('no');
    expect(await definitionOf(call, 'Idempotent').textContent()).toBe('yes');
    expect(await definitionOf(call, 'Open world').textContent()).toBe('no');
    expect(await call.locator('pre').textContent()).toBe(JSON.stringify({ message: 'hello from the model' }, null, 2));
    expect(await axeViolations(page)).toEqual([]);
    await call.getByRole('button', { name: 'Approve' }).click();

    const question = page.getByRole('dialog', { name: 'Approval: elicitation' });
    await question.waitFor();
    await question.getByText('MCP server "everything" asks: Please provide inputs for the following fields:').waitFor();
    expect(await question.getByRole('button', { name: 'Submit' }).isDisabled()).toBe(true);
    await question.getByLabel('String (required)').fill('Ada Lovelace');
    await question.getByLabel('Boolean').check();
    await question.getByLabel('Integer').fill('7');
    expect(await axeViolations(page)).toEqual([]);
    await question.getByRole('button', { name: 'Submit' }).click();
    await question.waitFor({ state: 'detached' });
    await page.getByRole('dialog', { name: 'Approval: elicitation' }).getByRole('button', { name: 'Decline' }).click();

    await page.getByRole('dialog', { name: 'Approval: final answer' }).getByRole('button', { name: 'Approve' }).click();
    await page.getByLabel('Answer', { exact: true }).waitFor();
    const answered = model.chatRequests.filter((request) => request.purpose === 'step').at(-1);
    const results = answered ? toolMessagesOf(answered) : [];
    expect(results[0]).toContain('hello from the model');
    expect(results[3]).toContain('- Name: Ada Lovelace');
    expect(results[3]).toContain('- Agreed to terms: true');
    expect(results[3]).toContain('- Favorite Integer: 7');
    expect(results[4]).toContain('User declined to provide the requested information.');

    await page.locator('[data-step-id="mcp"]').click();
    const thumbnail = page.getByRole('img', { name: 'Image 1 from everything__get-tiny-image' });
    await thumbnail.waitFor();
    expect(await thumbnail.evaluate((image: HTMLImageElement) => image.complete && image.naturalWidth > 0)).toBe(true);
    const resource = page.getByRole('list', { name: 'Result of everything__get-resource-links' });
    expect(await resource.getByText('Blob Resource 1').isVisible()).toBe(true);
    expect(await resource.locator('code').textContent()).toMatch(/^demo:\/\/resource\/dynamic\/blob\/1$/);
    expect(await resource.getByRole('link').count()).toBe(0);
    expect(problems.filter((problem) => /Content Security Policy/i.test(problem))).toEqual([]);
    await page.close();
  });
});
