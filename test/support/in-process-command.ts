/**
 * An amendsctl command run in this process through the real dispatcher (flags, exit codes,
 * diagnostics), its output captured: the same code as the binary without a Node start per call,
 * for suites that ask many questions of one store.
 */
import { Writable } from 'node:stream';
import type { Command, CommandIo } from '../../src/cli/command.js';
import { runExecutable } from '../../src/cli/dispatch.js';
import type { ProcessResult } from './amendsctl-process.js';

class Captured extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

export async function runInProcess(
  commands: readonly Command[],
  argv: string[],
  env: Record<string, string>,
): Promise<ProcessResult> {
  const stdout = new Captured();
  const stderr = new Captured();
  const io: CommandIo = { stdout, stderr, env };
  const code = await runExecutable({ program: 'amendsctl', description: 'test', commands: [...commands] }, argv, io);
  return { code, stdout: stdout.text, stderr: stderr.text };
}
