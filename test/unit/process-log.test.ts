/**
 * The log of a long-running process in-process (process-log.ts, json-log.ts, pretty-line.ts);
 * the real processes are in test/integration/process-logs.test.ts.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CommandIo } from '../../src/cli/command.js';
import { usageLogLine, withProcessLog } from '../../src/cli/process-log.js';
import { jsonLog, logFormatFrom } from '../../src/io/process/json-log.js';
import { prettyLine } from '../../src/io/process/pretty-line.js';
import { AmendsError, usageError } from '../../src/kernel/amends-error.js';

function capture(isTTY = false): NodeJS.WritableStream & { isTTY: boolean; lines: () => string[] } {
  const writes: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      writes.push(chunk.toString('utf8'));
      done();
    },
  });
  return Object.assign(stream, { isTTY, lines: () => writes.join('').split('\n').slice(0, -1) });
}

function io(stderr: ReturnType<typeof capture>, env: NodeJS.ProcessEnv = {}): CommandIo {
  return { stdout: capture(), stderr, env };
}

describe('--log-format', () => {
  it('is pretty on a terminal and JSON anywhere else, the flag winning over AMENDS_LOG_FORMAT', () => {
    expect(logFormatFrom(undefined, {}, { isTTY: true })).toBe('pretty');
    expect(logFormatFrom(undefined, {}, {})).toBe('json');
    expect(logFormatFrom(undefined, { AMENDS_LOG_FORMAT: 'PRETTY' }, {})).toBe('pretty');
    expect(logFormatFrom('json', { AMENDS_LOG_FORMAT: 'pretty' }, { isTTY: true })).toBe('json');
    expect(() => logFormatFrom('yaml', {}, {})).toThrow(/--log-format yaml: expected one of json, pretty/);
  });
});

describe('a process log', () => {
  it('binds fields to every later line, and tells whether a level is written', () => {
    const out = capture();
    const log = jsonLog(out, { role: 'relay' }, 'info');
    log.write('relay_started');
    log.bind({ namespace: 'ns-1', relay: 'r-1' });
    log.write('relay_active', { output_topic: 't' });
    log.write('relay_published', { rows: 1 }, 'debug');
    expect(log.enabled('debug')).toBe(false);
    expect(log.enabled('info')).toBe(true);
    const [started, active, ...rest] = out.lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(started).toMatchObject({ role: 'relay', msg: 'relay_started', level: 'info' });
    expect(started).not.toHaveProperty('namespace');
    expect(active).toMatchObject({ role: 'relay', namespace: 'ns-1', relay: 'r-1', output_topic: 't' });
    expect(rest).toEqual([]);
  });

  it('ends with one fatal line carrying the error, its next step and the exit code', async () => {
    const out = capture();
    const failure = new AmendsError('operational', 'the broker is gone\nsecond line', { nextStep: 'start it' });
    const code = await withProcessLog('worker', {}, io(out), async (log) => {
      log.bind({ namespace: 'ns-2', worker: 'w-1' });
      log.write('worker_started');
      throw failure;
    });
    expect(code).toBe(1);
    const lines = out.lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({
      level: 'fatal',
      role: 'worker',
      namespace: 'ns-2',
      worker: 'w-1',
      msg: 'failed',
      exit_code: 1,
      error: 'the broker is gone',
      next_step: 'start it',
    });
    expect(lines[1]).not.toHaveProperty('stack');
  });

  it('says a bad --log-level as its fatal line (exit 2) in the default format', async () => {
    const out = capture();
    const code = await withProcessLog('view', { logLevel: 'loud' }, io(out), async () => 0);
    expect(code).toBe(2);
    expect(out.lines().map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ level: 'fatal', role: 'view', exit_code: 2, error: expect.stringMatching(/loud/) }),
    ]);
  });

  it('writes a usage error found before the start as a log line off a terminal only', () => {
    const pipe = capture();
    expect(usageLogLine('relay', {}, io(pipe), 'unknown flag --x')).toBe(true);
    expect(JSON.parse(pipe.lines()[0] as string)).toMatchObject({
      level: 'fatal',
      exit_code: 2,
      error: 'unknown flag --x',
    });
    const terminal = capture(true);
    expect(usageLogLine('relay', {}, io(terminal), 'unknown flag --x')).toBe(false);
    expect(terminal.lines()).toEqual([]);
  });

  it('in the pretty format, reads as one human line each, the failure as the diagnostic', async () => {
    const out = capture(true);
    const code = await withProcessLog('worker', {}, io(out), async (log) => {
      log.bind({ namespace: 'ns-3', worker: 'w-2' });
      log.write('worker_started', { batch_size: 500, source_topic: 'two words' });
      throw usageError('--batch-size must be an integer in [1, 10000]');
    });
    expect(code).toBe(2);
    const [started, failed, ...rest] = out.lines();
    expect(started).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}worker ns-3 worker_started batch_size=500 source_topic="two words"$/,
    );
    expect(failed).toBe('amends worker: --batch-size must be an integer in [1, 10000] (see amends worker --help)');
    expect(rest).toEqual([]);
  });

  it('prints the next step of a failure on its own line, as dispatch does', () => {
    const line = { level: 'fatal', role: 'relay', msg: 'failed', exit_code: 1, error: 'gone', next_step: 'start it' };
    expect(prettyLine(line)).toBe('amends relay: gone\namends relay: next step: start it');
  });
});
