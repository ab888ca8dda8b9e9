import type { ReactNode } from 'react';
import { z } from 'zod';
import { BudgetRaiseActionSchema, describeCap } from '../../../../shared/budget-cap';
import { PlanRevisionActionSchema, type ApprovalRequest } from '../../../../shared/schemas/approval';
import { mcpCallOf } from './mcp-call';

const ToolActionSchema = z.object({ tool: z.string(), args: z.record(z.string(), z.unknown()).catch({}) });
const StepsActionSchema = z.object({ steps: z.array(z.unknown()) });
const SpawnActionSchema = z.object({ goal: z.string() });
const ElicitationAskSchema = z.object({ server: z.string() });

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const steps = (count: number) => `${count} step${count === 1 ? '' : 's'}`;

/** A built-in tool's call as what it does: "Write notes.txt", "Run `npm test`". */
function toolCallTitle(tool: string, args: Record<string, unknown>): ReactNode {
  const path = text(args.path);
  if (tool === 'write_file' && path) return <>Write {path}</>;
  if (tool === 'read_file' && path) return <>Read {path}</>;
  if (tool === 'list_files') return <>List the files in {path ?? 'the workspace'}</>;
  if (tool === 'run_command' && text(args.command)) {
    return (
      <>
        Run <code>{text(args.command)}</code>
      </>
    );
  }
  if (tool === 'calculator' && text(args.expression)) {
    return (
      <>
        Calculate <code>{text(args.expression)}</code>
      </>
    );
  }
  return <>Call {tool}</>;
}

function callTitle(request: ApprovalRequest): ReactNode {
  const mcp = mcpCallOf(request);
  if (mcp) return `Call ${mcp.mcp.server}'s ${mcp.mcp.tool}`;
  const call = ToolActionSchema.safeParse(request.action);
  return call.success ? toolCallTitle(call.data.tool, call.data.args) : 'Allow a tool call';
}

/** What a plan request asks, with the revision it is when the plan was made again (after a failure or a rejection). */
function planTitle(request: ApprovalRequest, revised: boolean): string {
  const revision = PlanRevisionActionSchema.safeParse(request.action);
  if (revision.success) return `Revised plan ${revision.data.revision} (${steps(revision.data.steps.length)})`;
  const plan = StepsActionSchema.safeParse(request.action);
  const count = plan.success ? ` (${steps(plan.data.steps.length)})` : '';
  return revised ? `Revised plan${count}` : `Approve the plan${count}`;
}

/** The decision a request asks for, in words: its dialog's heading. */
export function approvalTitle(request: ApprovalRequest, revised: boolean): ReactNode {
  switch (request.kind) {
    case 'tool_call':
      return callTitle(request);
    case 'uncertain_repeat': {
      const call = ToolActionSchema.safeParse(request.action);
      return call.success ? `Repeat a call of ${call.data.tool}` : 'Repeat a call';
    }
    case 'plan':
      return planTitle(request, revised);
    case 'final_answer':
      return 'Accept the final answer';
    case 'outcome':
      return 'Accept the outcome with its gaps';
    case 'budget_raise': {
      const raise = BudgetRaiseActionSchema.safeParse(request.action);
      return raise.success ? `Raise the budget to ${describeCap(raise.data.cap, raise.data.proposed)}` : 'Raise the budget';
    }
    case 'escalation':
      return request.stepId ? `Step ${request.stepId} is stuck: choose what happens` : 'A step is stuck: choose what happens';
    case 'elicitation': {
      const ask = ElicitationAskSchema.safeParse(request.action);
      return ask.success ? `${ask.data.server} asks for information` : 'A server asks for information';
    }
    case 'subagent_spawn': {
      const spawn = SpawnActionSchema.safeParse(request.action);
      return spawn.success ? `Start a sub-agent: ${spawn.data.goal}` : 'Start a sub-agent';
    }
    case 'model_call':
      return request.stepId ? `Send step ${request.stepId}'s request to the model` : 'Send a request to the model';
    case 'step_result':
      return request.stepId ? `Let step ${request.stepId}'s result go on` : "Let a step's result go on";
    case 'critical_decision':
      return 'Settle a critical decision';
    case 'resume_run':
      return 'Resume the run';
  }
}
