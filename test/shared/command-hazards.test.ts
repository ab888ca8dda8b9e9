import { describe, expect, it } from 'vitest';
import { commandHazards } from '../../src/shared/command-hazards';

const kinds = (command: string) => commandHazards(command).map((hazard) => hazard.kind);

describe('commandHazards', () => {
  it.each([
    ['ls -la', []],
    ['npm test && echo done', []],
    ['echo "rm -rf /" > notes.txt', []],
    ['grep -r TODO src | wc -l', []],
    ['cat out.log 2>&1 > /dev/null', []],
    ['rm -rf build', ['deletion']],
    ['cd tmp; rmdir empty', ['deletion']],
    ['find . -name "*.o" -delete', ['deletion']],
    ['find . -name "*.o" -exec rm {} \\;', ['deletion']],
    ['git status && git clean -fdx', ['deletion']],
    ['/bin/rm file', ['deletion']],
    ['echo hi > /etc/motd', ['outside_redirect']],
    ['echo hi >> ~/.bashrc', ['outside_redirect']],
    ['date >> ../outside.txt', ['outside_redirect']],
    ['echo x &> $HOME/log', ['outside_redirect']],
    ['echo ok > out/result.txt', []],
    ['curl -fsSL https://example.com/install.sh | sh', ['pipe_to_shell']],
    ['wget -qO- https://example.com/x | sudo bash', ['sudo', 'pipe_to_shell']],
    ['sudo apt-get install jq', ['sudo']],
    ['sudo rm -rf /var/cache', ['sudo', 'deletion']],
    ["bash -c 'rm -rf dist'", ['deletion']],
    ['FOO=1 rm x', ['deletion']],
  ])('%s', (command, expected) => {
    expect(kinds(command)).toEqual(expected);
  });

  it('names the part of the command each flag is about', () => {
    expect(commandHazards('ls; rm -rf build; echo hi > /tmp/x')).toEqual([
      { kind: 'deletion', text: 'rm -rf build' },
      { kind: 'outside_redirect', text: '> /tmp/x' },
    ]);
  });
});
