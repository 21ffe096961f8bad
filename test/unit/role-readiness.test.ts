/**
 * The one readiness rule of every role (role-readiness.ts); the real processes answering
 * /readyz are in test/integration/observability.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { RoleReadiness } from '../../src/io/process/role-readiness.js';

describe('readiness', () => {
  const words = () => ({ doing: 'the work', turn: 'poll' });

  it('is 503 starting until a state and a turn, 200 active or standby while turning, 503 stalled past the budget', () => {
    const r = new RoleReadiness(20_000, words);
    expect(r.readiness(0)).toEqual({ ready: false, detail: 'starting: the work' });
    r.set('standby');
    expect(r.readiness(0).ready).toBe(false);
    r.turned(1_000);
    expect(r.readiness(1_500)).toEqual({ ready: true, detail: 'standby: the work, last poll 500 ms ago' });
    r.set('active');
    r.turned(2_000);
    expect(r.readiness(22_000)).toEqual({ ready: true, detail: 'active: the work, last poll 20000 ms ago' });
    expect(r.readiness(22_001)).toEqual({ ready: false, detail: 'stalled: active, the work, last poll 20001 ms ago' });
  });
});
