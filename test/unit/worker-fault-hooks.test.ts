/**
 * The worker's owned fault points: what a control line arms, that nothing is read or wrapped
 * without AMENDS_FAULT_CONTROL, and that a bad line is reported rather than guessed at. (The
 * SIGSTOP itself is exercised on real processes by the showcase test.)
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { JsonLog } from '../../src/io/process/json-log.js';
import type { State } from '../../src/machines/ports.js';
import { parseFaultControlLine, withWorkerFaultHooks } from '../../src/showcase/worker-fault-hooks.js';

const state: State = {
  claim: async () => ({ epoch: 1, frontier: 0 }),
  observe: async () => ({ epoch: 1, frontier: 0 }),
  process: async () => ({ kind: 'acknowledged', frontier: 1 }),
};

function recordingLog() {
  const lines: { msg: string; fields: Record<string, unknown> }[] = [];
  const log: JsonLog = { write: (msg, fields = {}) => lines.push({ msg, fields }), enabled: () => true };
  return { log, lines };
}

describe('parseFaultControlLine', () => {
  it('arms a pause before the process call of one offset', () => {
    expect(parseFaultControlLine('{"fault":"pause-before-process","partition":1,"offset":42}')).toEqual({
      fault: 'pause-before-process',
      partition: 1,
      offset: 42,
    });
  });

  it.each([
    ['not json', 'not JSON'],
    ['{"fault":"explode","partition":0,"offset":1}', 'unknown fault "explode"'],
    ['{"fault":"pause-before-process","partition":-1,"offset":1}', 'partition must be an integer ≥ 0'],
    ['{"fault":"pause-before-process","partition":0,"offset":1.5}', 'offset must be an integer ≥ 0'],
    ['{"fault":"pause-before-process","partition":0}', 'offset must be an integer ≥ 0'],
  ])('refuses %s', (line, reason) => {
    expect(parseFaultControlLine(line)).toBe(reason);
  });
});

describe('withWorkerFaultHooks', () => {
  it('leaves the store unwrapped and stdin unread without AMENDS_FAULT_CONTROL', () => {
    const input = new PassThrough();
    const hooks = withWorkerFaultHooks(state, {}, recordingLog().log, input);
    expect(hooks.state).toBe(state);
    expect(input.listenerCount('data')).toBe(0);
  });

  it('logs what each control line armed or why it refused it', async () => {
    const input = new PassThrough();
    const { log, lines } = recordingLog();
    const hooks = withWorkerFaultHooks(state, { AMENDS_FAULT_CONTROL: 'stdin' }, log, input);
    input.write('{"fault":"pause-before-process","partition":0,"offset":7}\n{"fault":"nope"}\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.map((l) => l.msg)).toEqual(['fault_armed', 'fault_control_rejected']);
    expect(lines[0]?.fields).toMatchObject({ partition: 0, offset: 7 });
    // A batch without the armed offset passes straight through to the store.
    const outcome = await hooks.state.process(
      { partition: 0, records: [{ partition: 0, offset: 6, key: null, value: null }], epoch: 1, expectedFrontier: 6 },
      new AbortController().signal,
    );
    expect(outcome).toEqual({ kind: 'acknowledged', frontier: 1 });
    hooks.close();
  });
});
