import type { CapName } from '../../shared/budget-cap';
import { ArchonError } from '../../shared/errors';
import type { Usage } from '../model/chat';
import { costOf, type Price } from './pricing';

/** Where the day's budget starts: local midnight. */
export function startOfToday(now: Date): string {
  const day = new Date(now);
  day.setHours(0, 0, 0, 0);
  return day.toISOString();
}

export interface BudgetCaps {
  maxTokens: number | null;
  maxCostUsd: number | null;
  dayMaxTokens: number | null;
  dayMaxCostUsd: number | null;
  /** Runaway guards: total model calls and tool calls in one run. */
  maxModelCalls: number;
  maxToolCalls: number;
}

export interface BudgetSpend {
  tokens: number;
  costUsd: number;
  dayTokens: number;
  dayCostUsd: number;
  modelCalls: number;
  toolCalls: number;
}

export interface Reservation {
  tokens: number;
  costUsd: number;
}

export const WARNING_FRACTION = 0.8;

/** The runaway guards never go below these, however small the plan. */
export const MIN_MODEL_CALLS = 500;
/** Model calls a step may make beyond its turns (a compaction, a result review), and a run beyond its steps (plans, re-plans, the final answer). */
const EXTRA_CALLS_PER_STEP = 2;
const EXTRA_CALLS_PER_RUN = 50;

/**
 * The runaway guards for a plan (docs/ARCHITECTURE.md, "Run caps"):
 * model calls = max(500, steps × (maxIterations + 2) + 50), tool calls = twice that.
 */
export function callCapsFor(steps: number, maxIterations: number): Pick<BudgetCaps, 'maxModelCalls' | 'maxToolCalls'> {
  const maxModelCalls = Math.max(MIN_MODEL_CALLS, steps * (maxIterations + EXTRA_CALLS_PER_STEP) + EXTRA_CALLS_PER_RUN);
  return { maxModelCalls, maxToolCalls: 2 * maxModelCalls };
}

/** Which cap a call would break, in words an operator reads; `above`: how many runs up the cap belongs to (a sub-agent breaking its parent's cap: 1), where a raise goes. */
export type CapBreach = { cap: CapName; message: string; above?: number };

/**
 * One budget for a whole run, however many steps run at once: before every model call, what was
 * used, what is reserved by calls in flight, and this call's estimate must fit under every cap.
 * Every attempt is charged, retries included.
 */
export class BudgetMeter {
  private reserved = { tokens: 0, costUsd: 0 };
  private inFlight = 0;
  private releaseWaiters: (() => void)[] = [];
  private warned = false;
  private readonly raising = new Map<CapName, Promise<void>>();

  /** `parent`: a sub-agent's meter counts against its parent's too, so the parent's caps hold for the whole tree. */
  constructor(
    private caps: BudgetCaps,
    private readonly spend: BudgetSpend,
    readonly price: Price,
    private readonly parent: BudgetMeter | null = null,
  ) {}

  get totals(): Readonly<BudgetSpend> {
    return this.spend;
  }

  get limits(): Readonly<BudgetCaps> {
    return this.caps;
  }

  tokensLeft(): number | null {
    return this.caps.maxTokens === null ? null : Math.max(0, this.caps.maxTokens - this.spend.tokens - this.reserved.tokens);
  }

  /** Null when the call fits; otherwise the cap it would break. */
  /** `price`: the model's the call goes to (a role's), else the run's. */
  check(estimateTokens: number, price: Price = this.price): CapBreach | null {
    const cost = costOf(price, estimateTokens, 0);
    const over = (used: number, reserved: number, extra: number, cap: number | null) => cap !== null && used + reserved + extra > cap;
    if (this.spend.modelCalls >= this.caps.maxModelCalls) return { cap: 'model_calls', message: `the run reached its cap of ${this.caps.maxModelCalls} model calls` };
    if (over(this.spend.tokens, this.reserved.tokens, estimateTokens, this.caps.maxTokens)) {
      return { cap: 'tokens', message: `the next model call (~${estimateTokens} tokens) would take the run past its cap of ${this.caps.maxTokens} tokens (${this.spend.tokens} used)` };
    }
    if (over(this.spend.costUsd, this.reserved.costUsd, cost, this.caps.maxCostUsd)) {
      return { cap: 'cost', message: `the next model call would take the run past its cap of $${this.caps.maxCostUsd} ($${this.spend.costUsd.toFixed(4)} used)` };
    }
    if (over(this.spend.dayTokens, this.reserved.tokens, estimateTokens, this.caps.dayMaxTokens)) return { cap: 'day_tokens', message: `today's cap of ${this.caps.dayMaxTokens} tokens is reached` };
    if (over(this.spend.dayCostUsd, this.reserved.costUsd, cost, this.caps.dayMaxCostUsd)) return { cap: 'day_cost', message: `today's cap of $${this.caps.dayMaxCostUsd} is reached` };
    const parentBreach = this.parent?.check(estimateTokens, price) ?? null;
    return parentBreach && { ...parentBreach, message: `${parentBreach.message} (the parent run's cap, which covers its sub-agents)`, above: (parentBreach.above ?? 0) + 1 };
  }

  /** What is left under the token and cost caps, for a sub-agent's carved budget (null: no cap). */
  remaining(): { maxTokens: number | null; maxCostUsd: number | null } {
    const cost = this.caps.maxCostUsd === null ? null : Math.max(0, this.caps.maxCostUsd - this.spend.costUsd - this.reserved.costUsd);
    const own = { maxTokens: this.tokensLeft(), maxCostUsd: cost };
    const parent = this.parent?.remaining();
    const least = (a: number | null, b: number | null | undefined) => (a === null ? (b ?? null) : b === null || b === undefined ? a : Math.min(a, b));
    return { maxTokens: least(own.maxTokens, parent?.maxTokens), maxCostUsd: least(own.maxCostUsd, parent?.maxCostUsd) };
  }

  reserve(estimateTokens: number, price: Price = this.price): Reservation {
    this.parent?.reserve(estimateTokens, price);
    const reservation = { tokens: estimateTokens, costUsd: costOf(price, estimateTokens, 0) };
    this.reserved.tokens += reservation.tokens;
    this.reserved.costUsd += reservation.costUsd;
    this.spend.modelCalls++;
    this.inFlight++;
    return reservation;
  }

  release(reservation: Reservation): void {
    this.parent?.release(reservation);
    this.reserved.tokens -= reservation.tokens;
    this.reserved.costUsd -= reservation.costUsd;
    this.inFlight--;
    for (const wake of this.releaseWaiters.splice(0)) wake();
  }

  /** Calls of this run still holding a reservation (for a sub-agent: of the whole tree, whose caps it shares); what they really use may leave room. */
  callsInFlight(): number {
    return this.parent ? this.parent.callsInFlight() : this.inFlight;
  }

  /** Resolves when a call in flight releases its reservation (anywhere in the tree, for a sub-agent). */
  nextRelease(): Promise<void> {
    if (this.parent) return this.parent.nextRelease();
    return new Promise((resolve) => this.releaseWaiters.push(resolve));
  }

  /** Charges one attempt, at the price of the model that answered it (to the parent run's meter too). */
  charge(usage: Usage, price: Price = this.price): { tokens: number; costUsd: number } {
    this.parent?.charge(usage, price);
    const tokens = usage.promptTokens + usage.completionTokens;
    const costUsd = costOf(price, usage.promptTokens, usage.completionTokens);
    this.spend.tokens += tokens;
    this.spend.costUsd += costUsd;
    this.spend.dayTokens += tokens;
    this.spend.dayCostUsd += costUsd;
    return { tokens, costUsd };
  }

  /** True once, when spending plus what calls in flight may spend reaches 80% of a cap. */
  crossedWarning(): boolean {
    const fraction = Math.max(
      this.caps.maxTokens ? (this.spend.tokens + this.reserved.tokens) / this.caps.maxTokens : 0,
      this.caps.maxCostUsd ? (this.spend.costUsd + this.reserved.costUsd) / this.caps.maxCostUsd : 0,
    );
    if (this.warned || fraction < WARNING_FRACTION) return false;
    this.warned = true;
    return true;
  }

  countToolCall(): void {
    this.parent?.countToolCall();
    if (this.spend.toolCalls >= this.caps.maxToolCalls) {
      throw new ArchonError('BUDGET_EXCEEDED', `The run reached its cap of ${this.caps.maxToolCalls} tool calls.`);
    }
    this.spend.toolCalls++;
  }

  /** The value a raise of this cap proposes: twice the cap in force. */
  proposedRaise(cap: CapName, above = 0): number {
    if (above > 0 && this.parent) return this.parent.proposedRaise(cap, above - 1);
    return this.capValue(cap) * 2;
  }

  private capValue(cap: CapName): number {
    const value = { tokens: this.caps.maxTokens, cost: this.caps.maxCostUsd, day_tokens: this.caps.dayMaxTokens, day_cost: this.caps.dayMaxCostUsd, model_calls: this.caps.maxModelCalls, tool_calls: this.caps.maxToolCalls }[cap];
    return value ?? 0;
  }

  /**
   * One request per cap at a time, however many steps break it at once: a step that breaks a cap
   * already being asked about waits on the same answer instead of asking again.
   */
  raiseOnce(cap: CapName, ask: () => Promise<void>): Promise<void> {
    const pending = this.raising.get(cap);
    if (pending) return pending;
    const asking = ask().finally(() => this.raising.delete(cap));
    this.raising.set(cap, asking);
    return asking;
  }

  /** The plan grew (planned, or revised): the runaway guards grow with it; they never shrink, so a raise a person approved stays. */
  fitCalls(caps: Pick<BudgetCaps, 'maxModelCalls' | 'maxToolCalls'>): void {
    this.caps = { ...this.caps, maxModelCalls: Math.max(this.caps.maxModelCalls, caps.maxModelCalls), maxToolCalls: Math.max(this.caps.maxToolCalls, caps.maxToolCalls) };
  }

  /** A person raised the budget: the broken cap takes exactly the value they approved. */
  raise(cap: CapName, value: number, above = 0): void {
    if (above > 0 && this.parent) return this.parent.raise(cap, value, above - 1);
    if (cap === 'tokens') this.caps = { ...this.caps, maxTokens: value };
    else if (cap === 'cost') this.caps = { ...this.caps, maxCostUsd: value };
    else if (cap === 'day_tokens') this.caps = { ...this.caps, dayMaxTokens: value };
    else if (cap === 'day_cost') this.caps = { ...this.caps, dayMaxCostUsd: value };
    else if (cap === 'model_calls') this.caps = { ...this.caps, maxModelCalls: value };
    this.warned = false;
  }
}
