#!/usr/bin/env node
import { amendsctlCommands } from './amendsctl-commands.js';
/** `amendsctl`: one-shot commands (cli.md). */
import { runExecutable } from './dispatch.js';

const code = await runExecutable(
  {
    program: 'amendsctl',
    description:
      '  amendsctl: one-shot commands of amends: create and load source topics, simulate,\n  inspect, export and verify a namespace.',
    commands: amendsctlCommands,
  },
  process.argv.slice(2),
  { stdout: process.stdout, stderr: process.stderr, env: process.env },
);
process.exitCode = code;
