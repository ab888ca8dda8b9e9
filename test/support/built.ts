import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The project folder (what a tool process may read besides its workspace). */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const root = PROJECT_ROOT;

/** A file of the build (`npm run build`), which `npm test` makes before it runs the tests. */
export function builtFile(relative: string): string {
  const path = `${root}out/${relative}`;
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run build\` first (npm test does).`);
  return path;
}

export const ARCHON_BIN = `${root}bin/archon.mjs`;
