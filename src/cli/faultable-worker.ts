#!/usr/bin/env node
import { withWorkerFaultHooks } from '../showcase/worker-fault-hooks.js';
import type { Command } from './command.js';
/**
 * The showcase's worker: `amends worker` with the showcase's fault hooks injected around the
 * store's State (src/showcase/worker-fault-hooks.ts), so `amends worker` itself knows none.
 * The showcase starts it as `node dist/cli/faultable-worker.js worker …` with the argv of
 * `amends worker` and AMENDS_FAULT_CONTROL=stdin; without that variable it reads nothing and
 * runs as `amends worker` does. It lives in src/cli, not src/showcase, because it runs the
 * worker command, which sits above the showcase's room (test/unit/layout.test.ts).
 */
import { workerCommandWith } from './commands/worker.js';
import { runExecutable } from './dispatch.js';

const faultableWorker = workerCommandWith((state, log, env) => withWorkerFaultHooks(state, env, log));

const code = await runExecutable(
  {
    // Its diagnostics read as `amends worker: …`, like those of the worker it stands in for.
    program: 'amends',
    description: '  amends worker with the showcase fault hooks (AMENDS_FAULT_CONTROL=stdin).',
    commands: [faultableWorker as Command],
    defaultCommand: 'worker',
  },
  process.argv.slice(2),
  { stdout: process.stdout, stderr: process.stderr, env: process.env },
);
process.exitCode = code;
