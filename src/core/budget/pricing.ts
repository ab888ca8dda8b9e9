import { ArchonError } from '../../shared/errors';
import type { ModelPrice, RunOptions } from '../../shared/schemas/run';

/** Dollars per million tokens, input and output; `known` false when nobody (table, machine or operator) says what the model costs. */
export interface Price extends ModelPrice {
  known: boolean;
}

const CLOUD_PRICES: Record<string, ModelPrice> = {
  'gpt-4o': { inputPerMillion: 2.5, outputPerMillion: 10 },
  'gpt-4o-mini': { inputPerMillion: 0.15, outputPerMillion: 0.6 },
  'gpt-4.1': { inputPerMillion: 2, outputPerMillion: 8 },
  'gpt-4.1-mini': { inputPerMillion: 0.4, outputPerMillion: 1.6 },
  'gpt-4.1-nano': { inputPerMillion: 0.1, outputPerMillion: 0.4 },
  'o4-mini': { inputPerMillion: 1.1, outputPerMillion: 4.4 },
};

const FREE: Price = { inputPerMillion: 0, outputPerMillion: 0, known: true };

/** A model on this machine or the local network costs nothing; time and tool calls still count. */
function isLocal(baseUrl: string): boolean {
  const host = new URL(baseUrl).hostname;
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host) || /^10\./.test(host) || /^192\.168\./.test(host) || /^172\.(1[6-9]|2\d|3[01])\./.test(host) || host.endsWith('.local');
}

/** The price the operator set for the model (a flag for this run, else Settings), else free on this machine, else the built-in table, else unknown. */
export function priceFor(baseUrl: string, model: string, set: { prices?: Readonly<Record<string, ModelPrice>>; override?: ModelPrice | null } = {}): Price {
  const chosen = set.override ?? set.prices?.[model];
  if (chosen) return { ...chosen, known: true };
  if (isLocal(baseUrl)) return FREE;
  const entry = Object.entries(CLOUD_PRICES).find(([name]) => model === name || model.startsWith(`${name}-20`));
  return entry ? { ...entry[1], known: true } : { inputPerMillion: 0, outputPerMillion: 0, known: false };
}

export function costOf(price: Price, promptTokens: number, completionTokens: number): number {
  return (promptTokens * price.inputPerMillion + completionTokens * price.outputPerMillion) / 1_000_000;
}

/** The price a run keeps (null: nobody knows it); a money cap needs one: against a model nobody priced it would never apply, so the run does not start. */
export function settlePrice({ known, ...price }: Price, options: Pick<RunOptions, 'model' | 'maxCostUsd'>): ModelPrice | null {
  if (known) return price;
  if (options.maxCostUsd === null) return null;
  throw new ArchonError(
    'CONFIG_INVALID',
    `A cost cap of $${options.maxCostUsd} cannot be kept: the price of model "${options.model}" is unknown. ` +
      'Set its price (USD per million input and output tokens) in Settings under Model prices, or pass --price INPUT,OUTPUT, or run without a cost cap.',
  );
}
