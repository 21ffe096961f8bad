/**
 * `amendsctl wait --manifest M --drained` against the real broker, database and processes
 * (issue 35, item 6): at the timeout it names the stage still behind (decide, then relay),
 * and once it returns 0 the view already holds every version, so an export right after it
 * sees everything, which is what the README's walk-through relies on.
 *
 * Each test makes its own amends-test-* topics (deleted in afterAll); namespaces stay as rows.
 */

import { describe, expect, it } from 'vitest';
import { isOneLineDiagnostic, runAmendsctl } from '../support/amendsctl-process.js';
import { allStories, storyRecords, storyRows, storyVersions, twoKeysConfig } from '../support/fixture-stories.js';
import { deleteTestTopics } from '../support/kafka-test-tools.js';
import {
  amendsctl,
  createBoundSource,
  loadText,
  startAmends,
  transportEnv,
  transportSuite,
} from '../support/transport-process.js';
import { createSource } from '../support/worker-process.js';

const { topics, probe } = transportSuite();

function wait(manifestPath: string, ...more: string[]) {
  return runAmendsctl(['wait', '--manifest', manifestPath, '--drained', ...more], { ...transportEnv }, 150_000);
}

describe('amendsctl wait --drained', () => {
  it('names the stage behind at its timeout, and returns once the view holds every version', async () => {
    const source = await createBoundSource(topics, twoKeysConfig);
    await loadText(source, 'stories', allStories());
    const manifest = source.manifestPath;
    const prefix = `amendsctl wait: namespace ${source.namespace} is not drained after 1 s:`;

    const undecided = await wait(manifest, '--timeout', '1');
    expect(undecided.code).toBe(1);
    expect(isOneLineDiagnostic(undecided.stderr)).toBe(true);
    expect(undecided.stderr).toBe(
      `${prefix} decide: ${storyRecords} records to decide (partition 0 at 0 of 10, partition 1 at 0 of 7); see amendsctl inspect --manifest ${manifest}\n`,
    );

    startAmends('worker', manifest);
    await probe.waitDecided(source.namespace, storyRecords);
    const unrelayed = await wait(manifest, '--timeout', '1', '--json');
    expect(unrelayed.code).toBe(1);
    expect(unrelayed.stderr).toBe(
      `${prefix} relay: ${storyVersions} versions not yet published to the output topic; see amendsctl inspect --manifest ${manifest}\n`,
    );
    const behind = JSON.parse(unrelayed.stdout);
    expect(behind).toMatchObject({ drained: false, remaining: { decide: 0, relay: storyVersions, view: 0 } });

    startAmends('relay', manifest);
    startAmends('view', manifest);
    const drained = await wait(manifest, '--timeout', '120', '--json');
    expect(drained.stderr).toBe('');
    expect(drained.code).toBe(0);
    const document = JSON.parse(drained.stdout);
    expect(document).toMatchObject({
      namespace: source.namespace,
      drained: true,
      behind: [],
      remaining: { decide: 0, relay: 0, view: 0 },
      source: { status: 'ok' },
      partitions: [
        { partition: 0, frontier: 10, end: 10, lag: 0 },
        { partition: 1, frontier: 7, end: 7, lag: 0 },
      ],
      relay: { pending: 0 },
    });
    // Nothing more to wait for: the view already holds the latest version of every day.
    const view = await amendsctl(['export', '--manifest', manifest, '--what', 'view']);
    expect(view.trimEnd().split('\n')).toHaveLength(storyRows);
  });

  it('says in one line, with no timeout to sit out, when the source topic is gone', async () => {
    const source = await createSource(topics);
    await amendsctl(['source-load', '--manifest', source.manifestPath, '--file', 'fixtures/before.jsonl']);
    await deleteTestTopics([source.topic]);
    const began = Date.now();
    const result = await wait(source.manifestPath, '--timeout', '600');
    expect(result.code).toBe(1);
    expect(isOneLineDiagnostic(result.stderr)).toBe(true);
    expect(result.stderr).toMatch(
      new RegExp(
        `^amendsctl wait: namespace ${source.namespace} can never drain: topic ${source.topic} does not exist on `,
      ),
    );
    expect(Date.now() - began).toBeLessThan(60_000);
  });

  it('waits for a namespace nobody registered yet, naming that at the timeout; needs --drained', async () => {
    const source = await createSource(topics);
    const unregistered = await wait(source.manifestPath, '--timeout', '1');
    expect(unregistered.code).toBe(1);
    expect(unregistered.stderr).toBe(
      `amendsctl wait: namespace ${source.namespace} is not drained after 1 s: namespace ${source.namespace} is not registered yet (amends worker or amendsctl source-load registers it); see amendsctl inspect --manifest ${source.manifestPath}\n`,
    );

    const noCondition = await runAmendsctl(['wait', '--manifest', source.manifestPath], { ...transportEnv });
    expect(noCondition.code).toBe(2);
    expect(noCondition.stderr).toMatch(/^amendsctl wait: --drained is required/);
  });
});
