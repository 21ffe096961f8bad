import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/support/suite-sequencer.js';

/**
 * Two files side by side (issue 31): one at a time left a third of two cores idle while a
 * file waited on group joins, brokers and child processes; with three at a time the machine
 * was busy 97 % of the run and the files only starved each other. Every file has its own
 * topics and namespaces (or schemas, or a private cluster on ports of its own, taken in turns).
 * AMENDS_TEST_WORKERS sets another count (1: one file at a time, as before).
 */
const filesAtOnce = Number(process.env.AMENDS_TEST_WORKERS ?? 2);

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
