#!/usr/bin/env node
/** `amends`: the long-running processes (docs/design.md#commands). */
import { keepDashboardLive } from './dashboard-environment.js';
import { runExecutable } from './dispatch.js';

const argv = process.argv.slice(2);
keepDashboardLive(argv[0] === 'tui' || argv.includes('--tui'));
const { amendsCommands } = await import('./amends-commands.js');

const code = await runExecutable(
  {
    program: 'amends',
    description: '  amends: the long-running processes of a namespace (worker, relay, view, dashboard).',
    commands: amendsCommands,
    defaultCommand: 'worker',
  },
  argv,
  { stdout: process.stdout, stderr: process.stderr, env: process.env },
);
process.exitCode = code;
