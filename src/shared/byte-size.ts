const UNITS = ['bytes', 'KB', 'MB', 'GB', 'TB'] as const;

/** A byte count as people read it: decimal units, as disks and download pages give sizes (1.9 GB). */
export function formatBytes(bytes: number): string {
  const exponent = Math.min(UNITS.length - 1, Math.max(0, Math.floor(Math.log10(Math.max(bytes, 1)) / 3)));
  if (exponent === 0) return `${bytes} bytes`;
  const value = bytes / 1000 ** exponent;
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${UNITS[exponent]}`;
}
