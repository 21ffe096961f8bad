import type { Command } from './command.js';
import { chaosCommand } from './commands/chaos.js';
import { completionCommand } from './commands/completion.js';
import { exportCommand } from './commands/export.js';
import { inspectCommand } from './commands/inspect.js';
import { manifestRecoverCommand } from './commands/manifest-recover.js';
import { outputCreateCommand } from './commands/output-create.js';
import { rebuildCreateCommand } from './commands/rebuild-create.js';
import { showcaseCommand } from './commands/showcase.js';
import { simulateCommand } from './commands/simulate.js';
import { sourceCreateCommand } from './commands/source-create.js';
import { sourceLoadCommand } from './commands/source-load.js';
import { verifyCommand } from './commands/verify.js';

export const amendsctlCommands: Command[] = [
  sourceCreateCommand as Command,
  sourceLoadCommand as Command,
  outputCreateCommand as Command,
  rebuildCreateCommand as Command,
  manifestRecoverCommand as Command,
  simulateCommand as Command,
  inspectCommand as Command,
  exportCommand as Command,
  verifyCommand as Command,
  showcaseCommand as Command,
  chaosCommand as Command,
  completionCommand as Command,
];
