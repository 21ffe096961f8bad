#!/usr/bin/env node
/** `amendsctl`: one-shot commands (docs/design.md#commands). */
import { keepDashboardLive } from './dashboard-environment.js';
import { runExecutable } from './dispatch.js';

const argv = process.argv.slice(2);
keepDashboardLive(argv[0] === 'showcase' && argv.includes('--tui'));
const { amendsctlCommands } = await import('./amendsctl-commands.js');

const code = await runExecutable(
  {
    program: 'amendsctl',
    description:
      '  amendsctl: one-shot commands of amends: create and load source topics, simulate,\n  inspect, export and verify a namespace.',
    commands: amendsctlCommands,
  },
  argv,
  { stdout: process.stdout, stderr: process.stderr, env: process.env },
);
process.exitCode = code;
