#!/usr/bin/env node
/** `amends`: the long-running processes (cli.md). */
import { runExecutable } from './dispatch.js';

const argv = process.argv.slice(2);
// ink decides once, when it is first imported, whether it runs "in CI" (any CI or CI_*
// variable): then it draws only the last frame, at exit. Someone who asks for a dashboard on
// a real terminal wants it live, so those variables are dropped before ink loads.
const wantsDashboard = argv[0] === 'tui' || argv.includes('--tui');
if (wantsDashboard && process.stdout.isTTY) {
  for (const name of Object.keys(process.env)) {
    if (name === 'CI' || name === 'CONTINUOUS_INTEGRATION' || name.startsWith('CI_')) delete process.env[name];
  }
}
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
