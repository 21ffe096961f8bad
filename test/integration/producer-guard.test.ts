/**
 * The producer session guard against the real PostgreSQL (verification.md): one holder per
 * source incarnation, the holder named, a bounded wait, and a lost session noticed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ProducerGuard, producerGuardKeys } from '../../src/io/store/producer-guard.js';
import { testDatabaseUrl } from '../support/endpoints.js';

const opened: ProducerGuard[] = [];

function randomIncarnation(): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(Math.random() * 16).toString(16)).join('');
  return `kafka:${hex}`;
}

async function guard(incarnation: string, name: string): Promise<ProducerGuard> {
  const g = await ProducerGuard.open(testDatabaseUrl, incarnation, name);
  opened.push(g);
  return g;
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((g) => g.release()));
});

describe('producer guard', () => {
  it('derives two int4 keys from the incarnation, stable and distinct per incarnation', () => {
    const a = randomIncarnation();
    const [k1, k2] = producerGuardKeys(a);
    expect(producerGuardKeys(a)).toEqual([k1, k2]);
    for (const k of [k1, k2]) expect(k >= -(2 ** 31) && k < 2 ** 31 && Number.isInteger(k)).toBe(true);
    expect(producerGuardKeys(randomIncarnation())).not.toEqual([k1, k2]);
  });

  it('admits one holder per incarnation and names it to the next', async () => {
    const incarnation = randomIncarnation();
    const first = await guard(incarnation, 'amends-test first holder');
    const second = await guard(incarnation, 'amends-test second holder');
    const unrelated = await guard(randomIncarnation(), 'amends-test other source');

    expect(await first.tryAcquire()).toEqual({ acquired: true });
    const refused = await second.tryAcquire();
    expect(refused.acquired).toBe(false);
    if (!refused.acquired) {
      expect(refused.holder?.applicationName).toBe('amends-test first holder');
      expect(refused.holder?.backendStart).toBeInstanceOf(Date);
    }
    // Another source's guard is independent.
    expect(await unrelated.tryAcquire()).toEqual({ acquired: true });

    await first.release();
    expect(await second.tryAcquire()).toEqual({ acquired: true });
  });

  it('acquire waits a bounded time: succeeds when released in time, reports the holder when not', async () => {
    const incarnation = randomIncarnation();
    const holder = await guard(incarnation, 'amends-test slow holder');
    const waiter = await guard(incarnation, 'amends-test waiter');
    expect(await holder.tryAcquire()).toEqual({ acquired: true });

    const startedTimeout = Date.now();
    const timedOut = await waiter.acquire(300);
    expect(Date.now() - startedTimeout).toBeGreaterThanOrEqual(250);
    expect(timedOut.acquired).toBe(false);
    if (!timedOut.acquired) expect(timedOut.holder?.applicationName).toBe('amends-test slow holder');

    setTimeout(() => void holder.release(), 200);
    expect(await waiter.acquire(5_000)).toEqual({ acquired: true });
  });

  it('notices when its database session ends, and refuses to vouch for further writes', async () => {
    const g = await guard(randomIncarnation(), 'amends-test doomed holder');
    expect(await g.tryAcquire()).toEqual({ acquired: true });
    g.assertHeld();
    const killer = new pg.Client({ connectionString: testDatabaseUrl });
    await killer.connect();
    try {
      await killer.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'amends-test doomed holder'`,
      );
    } finally {
      await killer.end();
    }
    const deadline = Date.now() + 5_000;
    while (g.lost === undefined && Date.now() < deadline) await sleep(20);
    expect(g.lost, 'the guard noticing its session was ended, within 5 s').toBeDefined();
    expect(() => g.assertHeld()).toThrow(/producer guard was lost/);
  });
});
