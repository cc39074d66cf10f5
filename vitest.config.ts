import { defineConfig } from 'vitest/config';
import LongestFirst from './test/longest-first.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Crash and concurrency tests start many processes: two files at a time fits a 2-core machine.
    maxWorkers: 2,
    // The longest files start first, so the two workers end together (test/longest-first.ts).
    sequence: { sequencer: LongestFirst },
  },
});
