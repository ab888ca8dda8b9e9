import { describe, expect, it } from 'vitest';
import { costOf, priceFor } from '../../../src/core/budget/pricing';

const REMOTE = 'https://api.example.com/v1';

describe('model prices', () => {
  it('a model nobody priced is unknown, never free', () => {
    expect(priceFor(REMOTE, 'mystery-model')).toMatchObject({ known: false });
  });

  it('a model on this machine or the local network costs nothing', () => {
    for (const url of ['http://127.0.0.1:11434/v1', 'http://localhost:8080/v1', 'http://192.168.1.20:1234/v1', 'http://gpu.local/v1']) expect(priceFor(url, 'mystery-model'), url).toEqual({ inputPerMillion: 0, outputPerMillion: 0, known: true });
  });

  it('the built-in table prices known cloud models and their dated versions', () => {
    expect(priceFor(REMOTE, 'gpt-4o-mini-2024-07-18')).toEqual({ inputPerMillion: 0.15, outputPerMillion: 0.6, known: true });
  });

  it("the operator's price wins: a run's flag over Settings, Settings over the table and over a local model being free", () => {
    const prices = { 'mystery-model': { inputPerMillion: 1, outputPerMillion: 2 }, 'gpt-4o': { inputPerMillion: 3, outputPerMillion: 12 } };
    expect(priceFor(REMOTE, 'mystery-model', { prices })).toEqual({ inputPerMillion: 1, outputPerMillion: 2, known: true });
    expect(priceFor(REMOTE, 'gpt-4o', { prices })).toEqual({ inputPerMillion: 3, outputPerMillion: 12, known: true });
    expect(priceFor('http://127.0.0.1:8080/v1', 'mystery-model', { prices })).toMatchObject({ inputPerMillion: 1, known: true });
    expect(priceFor(REMOTE, 'mystery-model', { prices, override: { inputPerMillion: 5, outputPerMillion: 6 } })).toEqual({ inputPerMillion: 5, outputPerMillion: 6, known: true });
  });

  it('costs input and output tokens at their own rates, per million', () => {
    expect(costOf({ inputPerMillion: 2, outputPerMillion: 8, known: true }, 500_000, 250_000)).toBeCloseTo(3, 10);
  });
});
