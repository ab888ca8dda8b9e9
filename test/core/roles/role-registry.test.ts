import { describe, expect, it } from 'vitest';
import { RoleRegistry } from '../../../src/core/roles/role-registry';
import { catalogueTools } from '../../support/tools';

const registry = new RoleRegistry({ reader: { description: 'Reads files.', tools: ['read_file', 'list_files'] } });
const plan = (...steps: { id: string; role?: string; tool?: string }[]) => ({ goal: 'g', steps: steps.map((step) => ({ description: 'd', dependencies: [], ...step })) });

describe('the role registry', () => {
  it('always has the built-in roles, each with every tool unless the operator says otherwise', () => {
    expect(registry.names()).toEqual(['planner', 'executor', 'critic', 'reader']);
    const tools = catalogueTools();
    expect(registry.toolsOf('executor', tools).names()).toEqual(tools.names());
    expect(registry.toolsOf('reader', tools).names().sort()).toEqual(['list_files', 'read_file']);
  });

  it('refuses, in words the planner can act on, planner or critic as a step role and a planned call outside the role', () => {
    expect(registry.planErrors(plan({ id: 'a' }, { id: 'b', role: 'reader', tool: 'read_file' }, { id: 'c', role: 'executor' }))).toEqual([]);
    expect(registry.planErrors(plan({ id: 'a', role: 'ghost' }, { id: 'b', role: 'critic' }, { id: 'c', role: 'reader', tool: 'run_command' }))).toEqual([
      'Step "b" names the role "critic", which no step may have. Roles: executor, reader.',
      'Step "c" calls run_command, which its role "reader" may not use (its tools: read_file, list_files).',
    ]);
  });

  it('runs a step whose role no one defined as the default role, with a note, and checks its direct call against that role', () => {
    expect(registry.roleOf({ id: 'a', description: 'd', dependencies: [], role: 'ghost' })).toBe('executor');
    expect(registry.undefinedRoleNotes(plan({ id: 'a', role: 'ghost' }, { id: 'b', role: 'reader' }))).toEqual(['Step "a" names the role "ghost", which is not defined; it runs as executor.']);
    const subAgent = new RoleRegistry({ reader: { description: 'Reads files.', tools: ['read_file'] } }, 'reader');
    expect(subAgent.roleOf({ id: 'a', description: 'd', dependencies: [], role: 'ghost' })).toBe('reader');
    expect(subAgent.planErrors(plan({ id: 'a', tool: 'run_command' }, { id: 'b', role: 'ghost', tool: 'read_file' }))).toEqual([
      'Step "a" calls run_command, which its role "reader" may not use (its tools: read_file).',
    ]);
    expect(new RoleRegistry({}, 'critic').stepDefault).toBe('executor');
  });

  it('tells the planner the roles a step may have, with their descriptions and tools', () => {
    expect(registry.describeForPlanner()).toBe('- executor: Carries out a step with the tools (the default for steps).\n- reader: Reads files. Tools: read_file, list_files.');
  });
});
