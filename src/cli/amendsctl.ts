#!/usr/bin/env node
/** `amendsctl`: one-shot commands (docs/design.md#commands). */
import { amendsctlCommandLoader } from './amendsctl-command-loaders.js';
import { keepDashboardLive } from './dashboard-environment.js';
import { runExecutable } from './dispatch.js';

const argv = process.argv.slice(2);
keepDashboardLive(argv[0] === 'showcase' && argv.includes('--tui'));
// The command named first is loaded alone; anything else (help, a typo) loads them all.
const named = amendsctlCommandLoader(argv[0]);
const commands = named === undefined ? (await import('./amendsctl-commands.js')).amendsctlCommands : [await named()];

const code = await runExecutable(
  {
    program: 'amendsctl',
    description:
      '  amendsctl: one-shot commands of amends: create, adopt and load source topics,\n  simulate, inspect, wait for, export, verify and drop a namespace.',
    commands,
  },
  argv,
  { stdout: process.stdout, stderr: process.stderr, env: process.env },
);
process.exitCode = code;
