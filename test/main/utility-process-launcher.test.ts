import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import type { UtilityProcess } from 'electron';
import { createUtilityProcessLauncher } from '../../src/main/utility-process-launcher';

function fakeUtilityProcess() {
  return Object.assign(new EventEmitter(), { pid: 999_999_999, postMessage: vi.fn(), kill: vi.fn(() => true) });
}

describe('createUtilityProcessLauncher', () => {
  it('forks a utility process with an empty environment and relays parsed messages', () => {
    const child = fakeUtilityProcess();
    const fork = vi.fn(() => child as unknown as UtilityProcess);
    const launched = createUtilityProcessLauncher(fork).launch('/app/out/node/executor.js', { args: ['--x'], cwd: '/work' });
    expect(fork).toHaveBeenCalledWith('/app/out/node/executor.js', ['--x'], expect.objectContaining({ cwd: '/work', env: {}, serviceName: expect.any(String) }));

    const heard: unknown[] = [];
    launched.onMessage((message) => heard.push(message));
    child.emit('message', { type: 'ready', pid: 5 });
    child.emit('message', { type: 'surprise' });
    expect(heard).toEqual([{ type: 'ready', pid: 5 }, { type: 'protocol_error', message: expect.any(String) }]);

    launched.send({ type: 'ping', id: 3 });
    expect(child.postMessage).toHaveBeenCalledWith({ type: 'ping', id: 3 });
  });

  it("passes the permission model's flags to the utility process", () => {
    const fork = vi.fn(() => fakeUtilityProcess() as unknown as UtilityProcess);
    const execArgv = ['--permission', '--allow-fs-read=/app', '--allow-fs-write=/work', '--allow-child-process'];
    createUtilityProcessLauncher(fork).launch('/app/out/node/executor.js', { execArgv });
    expect(fork).toHaveBeenCalledWith('/app/out/node/executor.js', [], expect.objectContaining({ execArgv }));
  });

  it('falls back to killing the process itself when it leads no process group', () => {
    const child = fakeUtilityProcess();
    const launched = createUtilityProcessLauncher(() => child as unknown as UtilityProcess).launch('/x.js');
    const exits: (number | null)[] = [];
    launched.onExit((code) => exits.push(code));
    launched.kill();
    expect(child.kill).toHaveBeenCalled();
    child.emit('exit', 0);
    expect(exits).toEqual([0]);
  });
});
