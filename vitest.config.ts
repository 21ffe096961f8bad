import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/support/suite-sequencer.js';

/**
 * Files run side by side (issue 31): most of the integration files wait on brokers, group
 * joins and child processes far more than they compute, so three at a time on two cores
 * finish sooner without starving each other; every file has its own topics and namespaces
 * (or schemas, or a private cluster on ports of its own). AMENDS_TEST_WORKERS sets another
 * count (1: one file at a time, as before).
 */
const filesAtOnce = Number(process.env.AMENDS_TEST_WORKERS ?? 3);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // Integration suites need the real broker and database: this fails the run, never skips.
    globalSetup: ['test/support/require-stack.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    maxWorkers: filesAtOnce,
    sequence: { sequencer: LongestFirstSequencer },
  },
});
