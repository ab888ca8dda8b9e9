/** JSON with object keys sorted at every level: equal values always serialize, and hash, equal. */
export function canonicalJson(value: unknown): string {
  const canonical = (inner: unknown): unknown => {
    if (Array.isArray(inner)) return inner.map(canonical);
    if (inner && typeof inner === 'object') {
      return Object.fromEntries(
        Object.entries(inner as Record<string, unknown>)
          .filter(([, entry]) => entry !== undefined)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([key, entry]) => [key, canonical(entry)]),
      );
    }
    return inner;
  };
  return JSON.stringify(canonical(value) ?? null);
}
