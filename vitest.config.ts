import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // A poll waits for an outcome, not a deadline: on a loaded 2-core machine a UI or a process may take seconds to get there.
    expect: { poll: { timeout: 20_000 } },
    pool: 'forks',
    allowOnly: false,
    reporters: ['default', './test/support/summary-reporter.ts'],
    // Tests keep the auditor's keys out of the user's config folder.
    env: { ARCHON_AUDIT_KEY_DIR: join(tmpdir(), 'archon-test-audit-keys') },
  },
});
