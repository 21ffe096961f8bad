/**
 * The chaos run's write measurements (src/showcase/write-measures.ts): fault → the first probe
 * commit that counts (another node after a failover; after the stop, after a crash), the
 * longest pause between probe commits up to it, and amends' first commit: the decided
 * frontier growing after the probe's first commit there.
 */
import { describe, expect, it } from 'vitest';
import { WriteMeasures } from '../../src/showcase/write-measures.js';

describe('write measurements', () => {
  it('takes the first commit on another node after a failover, and the longest pause before it', () => {
    const m = new WriteMeasures();
    m.committed(900, 5442);
    m.committed(1_000, 5442);
    const kill = m.open({ struckMs: 1_050, notPort: 5442 });
    // The old primary still answers once (a switchover's demotion comes later), then nothing.
    m.committed(1_100, 5442);
    m.committed(4_600, 5452);
    m.committed(4_700, 5452);
    expect(kill).toEqual({
      first_commit_s: 3.55,
      first_commit_port: 5452,
      longest_gap_s: 3.5,
      amends_first_commit_s: null,
    });
  });

  it("takes amends' first commit as the frontier's first growth after the probe reached the new primary", () => {
    const m = new WriteMeasures();
    m.committed(1_000, 5442);
    const kill = m.open({ struckMs: 1_000, notPort: 5442 });
    expect(m.awaitingAmends()).toBe(false);
    m.committed(3_000, 5452);
    expect(m.awaitingAmends()).toBe(true);
    // The frontier as the new primary holds it when the probe first commits there (a batch
    // replicated from the old primary is in it already), then unchanged, then grown.
    m.frontierRead(3_010, 700);
    m.frontierRead(3_100, 700);
    m.frontierRead(3_900, 750);
    expect(kill.amends_first_commit_s).toBe(2.9);
    expect(m.awaitingAmends()).toBe(false);
  });

  it('counts, after a crash of the one node, only commits after its stop completed', () => {
    const m = new WriteMeasures();
    m.committed(1_000, 5432);
    const crash = m.open({ struckMs: 1_050, afterMs: 1_400 });
    m.committed(1_200, 5432);
    expect(crash.first_commit_s).toBeNull();
    m.committed(6_050, 5432);
    expect(crash).toMatchObject({ first_commit_s: 5, first_commit_port: 5432, longest_gap_s: 4.85 });
  });

  it('leaves a measurement open (null) while no commit counts', () => {
    const m = new WriteMeasures();
    const isolated = m.open({ struckMs: 0, notPort: 5442 });
    m.committed(100, 5442);
    expect(isolated).toEqual({
      first_commit_s: null,
      first_commit_port: null,
      longest_gap_s: null,
      amends_first_commit_s: null,
    });
  });
});
