/**
 * The relay's and the view's ride through outages (src/io/process/ride-through.ts) and which errors
 * count as one (src/cli/dependency-outage.ts, composed of the store's and the Kafka room's tests
 * and the kernel's `outage` flag walk): a fresh session after each outage within the
 * budget, the budget measured from the first failure until progress, anything else fatal.
 */
import { describe, expect, test } from 'vitest';
import { isDependencyOutage as isOutageError } from '../../src/cli/dependency-outage.js';
import { listedOffset } from '../../src/io/kafka/kafka-admin.js';
import type { JsonLog } from '../../src/io/process/json-log.js';
import { retryOutages, rideThrough } from '../../src/io/process/ride-through.js';
import { operationalError } from '../../src/kernel/amends-error.js';

function recordingLog(): JsonLog & { lines: string[] } {
  const lines: string[] = [];
  return { lines, write: (msg: string) => lines.push(msg) } as unknown as JsonLog & { lines: string[] };
}

/** What a ListOffsets answer for out-topic[0] looks like to `listedOffset`. */
function listed(offset: number, error?: { code: number; message: string }) {
  return {
    topic: 'out-topic',
    partition: 0,
    offset,
    ...(error === undefined ? {} : { error }),
  } as unknown as Parameters<typeof listedOffset>[0];
}

function thrownBy(f: () => unknown): unknown {
  try {
    f();
  } catch (error) {
    return error;
  }
  throw new Error('nothing was thrown');
}

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:15432'), { code: 'ECONNREFUSED' });

describe('isOutageError', () => {
  test.each([
    ['a refused connect', refused()],
    [
      'a server restart (57P01)',
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
    ],
    ['a cut connection', new Error('Connection terminated unexpectedly')],
    [
      'a lost role lock session',
      operationalError("the relay lock's database session ended; another relay may be active now"),
    ],
    ['one wrapped as a cause', operationalError('reading the view frontiers failed', refused())],
    ['a broker that does not answer', new Error('Local: Timed out')],
    ['a leaderless partition (-1001, no error)', thrownBy(() => listedOffset(listed(-1001), 'read-committed-end'))],
    [
      'a partition between leaders (UNKNOWN_LEADER_EPOCH)',
      thrownBy(() =>
        listedOffset(listed(-1, { code: 75, message: 'Broker: Unknown leader epoch' }), 'read-committed-end'),
      ),
    ],
    [
      'a new leader whose high watermark has not caught up (OFFSET_NOT_AVAILABLE)',
      thrownBy(() =>
        listedOffset(
          listed(-1, { code: 78, message: 'Broker: Leader high watermark is not caught up' }),
          'read-committed-end',
        ),
      ),
    ],
    [
      "kafkajs's leader election (LEADER_NOT_AVAILABLE)",
      operationalError(
        'cannot read the configuration of topic ledger: There is no leader for this topic-partition as we are in the middle of a leadership election',
      ),
    ],
    ["kafkajs's dying broker (NETWORK_EXCEPTION)", new Error('The server disconnected before a response was received')],
    [
      'offsets asked of a partition without a known leader (-156)',
      operationalError(
        'cannot list the read-committed-end offsets of topic ledger-out on brokers 127.0.0.1:27092: Local: No such entry (code -156)',
      ),
    ],
  ])('%s is an outage', (_, error) => {
    expect(isOutageError(error)).toBe(true);
  });
  test.each([
    ['a refused statement', Object.assign(new Error('amends-test rejects this commit'), { code: 'P0001' })],
    ['a conflict', operationalError('version 1 is held as {…} but this record says {…}')],
    ['a recreated topic', operationalError('output topic X has UUID a, the binding says b')],
    ['nothing', undefined],
  ])('%s is not', (_, error) => {
    expect(isOutageError(error)).toBe(false);
  });
});

describe('rideThrough', () => {
  test('runs a fresh session after each outage within the budget, and logs each', async () => {
    const log = recordingLog();
    let sessions = 0;
    const result = await rideThrough(
      { budgetMs: 30_000, signal: new AbortController().signal, log, role: 'view', isOutage: isOutageError },
      async () => {
        sessions += 1;
        if (sessions < 3) throw refused();
        return 'drained';
      },
    );
    expect(result).toBe('drained');
    expect(sessions).toBe(3);
    expect(log.lines).toEqual(['view_outage', 'view_outage']);
  });

  test('an error that is not an outage ends it at once', async () => {
    const log = recordingLog();
    const fatal = operationalError('the store is inconsistent');
    await expect(
      rideThrough(
        { budgetMs: 30_000, signal: new AbortController().signal, log, role: 'view', isOutage: isOutageError },
        async () => {
          throw fatal;
        },
      ),
    ).rejects.toBe(fatal);
    expect(log.lines).toEqual([]);
  });

  test('past the budget (from the first failure, reset by progress) the outage is the error', async () => {
    let clock = 0;
    let sessions = 0;
    const options = {
      budgetMs: 1_000,
      signal: new AbortController().signal,
      log: recordingLog(),
      role: 'relay',
      isOutage: isOutageError,
    };
    const ride = rideThrough({ ...options, now: () => clock }, async (progressed) => {
      sessions += 1;
      // Session 2 makes progress: the third failure starts a new outage clock.
      if (sessions === 2) progressed();
      clock += 600;
      throw refused();
    });
    await expect(ride).rejects.toThrow(/^outage budget of 1 s spent: connect ECONNREFUSED/);
    // 1: fails at 600 (outage since 600); 2: progress, fails at 1200 (since 1200);
    // 3: fails at 1800 (600 ms in); 4: fails at 2400 (1200 ms in): spent.
    expect(sessions).toBe(4);
  }, 10_000);

  test('budget 0: the first outage ends it; a stop during the wait resolves undefined', async () => {
    const log = recordingLog();
    await expect(
      rideThrough(
        { budgetMs: 0, signal: new AbortController().signal, log, role: 'relay', isOutage: isOutageError },
        async () => {
          throw refused();
        },
      ),
    ).rejects.toThrow(/^connect ECONNREFUSED 127\.0\.0\.1:15432$/);
    const stop = new AbortController();
    const stopped = rideThrough(
      { budgetMs: 30_000, signal: stop.signal, log, role: 'relay', isOutage: isOutageError },
      async () => {
        setTimeout(() => stop.abort(), 10);
        throw refused();
      },
    );
    await expect(stopped).resolves.toBeUndefined();
  });
});

describe('retryOutages (one-shot commands)', () => {
  test('tries again after an outage, up to the attempts; anything else is thrown at once', async () => {
    let calls = 0;
    const flaky = async () => {
      calls += 1;
      if (calls === 1) throw new Error('Local: Timed out');
      return 'described';
    };
    await expect(retryOutages(2, flaky, isOutageError)).resolves.toBe('described');
    expect(calls).toBe(2);

    calls = 0;
    const down = async () => {
      calls += 1;
      throw new Error('Local: Timed out');
    };
    await expect(retryOutages(2, down, isOutageError)).rejects.toThrow('Local: Timed out');
    expect(calls).toBe(2);

    calls = 0;
    const refused = async () => {
      calls += 1;
      throw operationalError('output topic X has UUID a, the binding says b');
    };
    await expect(retryOutages(3, refused, isOutageError)).rejects.toThrow('UUID');
    expect(calls).toBe(1);
  });
});
