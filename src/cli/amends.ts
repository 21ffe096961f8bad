#!/usr/bin/env node
import { amendsCommands } from './amends-commands.js';
/** `amends`: the long-running processes (cli.md). */
import { runExecutable } from './dispatch.js';

const code = await runExecutable(
  {
    program: 'amends',
    description: '  amends: the long-running processes of a namespace (worker, relay, view, dashboard).',
    commands: amendsCommands,
    defaultCommand: 'worker',
  },
  process.argv.slice(2),
  { stdout: process.stdout, stderr: process.stderr, env: process.env },
);
process.exitCode = code;
