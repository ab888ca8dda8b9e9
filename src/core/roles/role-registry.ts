import { BUILT_IN_ROLES, StoredRoleSchema, type StoredRole } from '../../shared/schemas/roles';
import type { Plan, PlanStep } from '../../shared/schemas/plan';
import type { ToolRegistry } from '../tools/tool-registry';

/** The role a step runs as when its plan names none. */
export const DEFAULT_STEP_ROLE = 'executor';

const BUILT_IN_DESCRIPTIONS: Record<(typeof BUILT_IN_ROLES)[number], string> = {
  planner: 'Plans the goal as a graph of steps and writes the final answer.',
  executor: 'Carries out a step with the tools (the default for steps).',
  critic: 'Judges results against the task and its criteria.',
};

/**
 * A run's roles (MA-05): the built-in planner, executor and critic (each the run's own model and
 * every tool unless the operator says otherwise) and the operator's specialists.
 */
export class RoleRegistry {
  private readonly roles: ReadonlyMap<string, StoredRole>;
  /** The role of a step whose plan names none or one not defined (a sub-agent's steps: its step's role, when a step may have it). */
  readonly stepDefault: string;

  constructor(configured: Readonly<Record<string, StoredRole>> = {}, stepDefault: string = DEFAULT_STEP_ROLE) {
    const builtIn = BUILT_IN_ROLES.map((name): [string, StoredRole] => [name, StoredRoleSchema.parse({ description: BUILT_IN_DESCRIPTIONS[name] })]);
    this.roles = new Map([...builtIn, ...Object.entries(configured)]);
    this.stepDefault = this.stepRoles().includes(stepDefault) ? stepDefault : DEFAULT_STEP_ROLE;
  }

  names(): string[] {
    return [...this.roles.keys()];
  }

  get(name: string): StoredRole | undefined {
    return this.roles.get(name);
  }

  /** The role's tools, in code: a tool outside its list is neither offered nor run. */
  toolsOf(name: string, tools: ToolRegistry): ToolRegistry {
    const allowed = this.roles.get(name)?.tools ?? 'all';
    return allowed === 'all' ? tools : tools.without(tools.names().filter((tool) => !allowed.includes(tool)));
  }

  /** The roles a step may be given, as the planner reads them. */
  describeForPlanner(): string {
    return [...this.roles]
      .filter(([name]) => name !== 'planner' && name !== 'critic')
      .map(([name, role]) => `- ${name}: ${role.description || '(no description)'}${role.tools === 'all' ? '' : ` Tools: ${role.tools.join(', ') || 'none'}.`}`)
      .join('\n');
  }

  /** The role a step runs as: a role the operator did not define is no error (a model may name roles freely), the step runs as the default. */
  roleOf(step: PlanStep): string {
    return step.role !== undefined && this.roles.has(step.role) ? step.role : this.stepDefault;
  }

  /** What is wrong with the plan's roles, each as a sentence the planner can act on. */
  planErrors(plan: Plan): string[] {
    return plan.steps.flatMap((step) => this.stepErrors(step));
  }

  /** The plan's roles no one defined, each as a note of the role its step runs as instead. */
  undefinedRoleNotes(plan: Plan): string[] {
    return plan.steps.filter((step) => step.role !== undefined && !this.roles.has(step.role)).map((step) => `Step "${step.id}" names the role "${step.role ?? ''}", which is not defined; it runs as ${this.stepDefault}.`);
  }

  private stepErrors(step: PlanStep): string[] {
    const name = step.role !== undefined && (step.role === 'planner' || step.role === 'critic') ? step.role : this.roleOf(step);
    const role = this.roles.get(name);
    if (!role || name === 'planner' || name === 'critic') return [`Step "${step.id}" names the role "${name}", which no step may have. Roles: ${this.stepRoles().join(', ')}.`];
    if (step.tool !== undefined && role.tools !== 'all' && !role.tools.includes(step.tool)) return [`Step "${step.id}" calls ${step.tool}, which its role "${name}" may not use (its tools: ${role.tools.join(', ') || 'none'}).`];
    return [];
  }

  private stepRoles(): string[] {
    return this.names().filter((name) => name !== 'planner' && name !== 'critic');
  }
}
