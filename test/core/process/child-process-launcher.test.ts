import { describe, expect, it } from 'vitest';
import type { ExecutorMessage } from '../../../src/shared/executor-protocol';
import { childProcessLauncher } from '../../../src/core/process/child-process-launcher';
import type { ToolProcess } from '../../../src/core/process/process-launcher';
import { builtFile } from '../../support/built';

function nextMessage(child: ToolProcess, type: ExecutorMessage['type']): Promise<ExecutorMessage> {
  return new Promise((resolve) => {
    const off = child.onMessage((message) => {
      if (message.type === type) {
        off();
        resolve(message);
      }
    });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('childProcessLauncher', () => {
  it('starts the tool executor in its own process group, talks to it, and kills the group', async () => {
    const child = childProcessLauncher.launch(builtFile('node/executor.js'));
    const ready = await nextMessage(child, 'ready');
    expect(ready).toEqual({ type: 'ready', pid: child.pid });
    expect(child.pid).not.toBe(process.pid);

    const pong = nextMessage(child, 'pong');
    child.send({ type: 'ping', id: 7 });
    expect(await pong).toEqual({ type: 'pong', id: 7 });

    const exited = new Promise<void>((resolve) => child.onExit(() => resolve()));
    child.kill('SIGKILL');
    await exited;
    expect(isAlive(child.pid as number)).toBe(false);
  });

  it('answers a malformed message with a protocol error instead of crashing', async () => {
    const child = childProcessLauncher.launch(builtFile('node/executor.js'));
    await nextMessage(child, 'ready');
    const error = nextMessage(child, 'protocol_error');
    child.send({ type: 'launch_missiles' } as never);
    expect((await error).type).toBe('protocol_error');
    const pong = nextMessage(child, 'pong');
    child.send({ type: 'ping', id: 1 });
    expect(await pong).toEqual({ type: 'pong', id: 1 });
    child.kill('SIGKILL');
  });
});
