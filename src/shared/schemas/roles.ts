import { z } from 'zod';

/** A role's name: `planner`, `executor`, `critic`, or an operator's specialist. */
export const RoleNameSchema = z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'A role name is 1-32 letters, digits, "_" or "-".');

/** The roles every run has; a specialist is any other name in the registry. */
export const BUILT_IN_ROLES = ['planner', 'executor', 'critic'] as const;
export type BuiltInRole = (typeof BUILT_IN_ROLES)[number];

/** The model server a role talks to. The API key is read from a roles file and kept with the saved keys, never stored with a run. */
export const RoleModelSchema = z.object({ url: z.url({ protocol: /^https?$/ }), name: z.string().max(200), apiKey: z.string().min(1).max(4096).optional() }).strict();
export type RoleModel = z.infer<typeof RoleModelSchema>;

/** One role of the registry: absent `model` means the run's own model; `tools` the names it may call, or "all". */
export const RoleSchema = z
  .object({
    description: z.string().max(2000).default(''),
    model: RoleModelSchema.optional(),
    tools: z.union([z.array(z.string().min(1).max(64)).max(200), z.literal('all')]).default('all'),
    /** Added to the role's system prompt. */
    systemPrompt: z.string().max(8000).optional(),
    /** How many of this role's calls run at once (also bounded by its server's slots). */
    maxConcurrency: z.int().min(1).max(64).optional(),
  })
  .strict();
export type Role = z.infer<typeof RoleSchema>;

/** A role as stored with a run or in Settings: never with its key. */
export const StoredRoleSchema = RoleSchema.extend({ model: RoleModelSchema.omit({ apiKey: true }).optional() });
export type StoredRole = z.infer<typeof StoredRoleSchema>;

/** The file `--roles FILE` reads. */
export const RolesFileSchema = z.object({ roles: z.record(RoleNameSchema, RoleSchema) }).strict();
export type RolesFile = z.infer<typeof RolesFileSchema>;

/** How deep sub-agents may nest: a run's child may have children, theirs may not. */
export const MAX_SUBAGENT_DEPTH = 2;
