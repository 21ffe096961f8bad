/**
 * Every role's `/metrics` passes Prometheus's own linter (issue 35, item 8): worker, relay and
 * view run on a namespace with records decided, published and viewed, each started as the
 * systemd units start it (deploy/systemd/): manifest, database, brokers and metrics address
 * from a settings file alone, the environment's AMENDS_DATABASE_URL and AMENDS_BROKERS empty.
 * Each scrape goes through `promtool check metrics`, which must print nothing and exit 0.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requireBuild } from '../support/amendsctl-process.js';
import { testBrokers, testDatabaseUrl } from '../support/endpoints.js';
import { fixturePath, twoKeysConfig } from '../support/fixture-stories.js';
import { deleteTestTopics } from '../support/kafka-test-tools.js';
import {
  AmendsProcess,
  createBoundSource,
  loadText,
  scratchFile,
  TransportProbe,
} from '../support/transport-process.js';

const topics = new Set<string>();
const probe = new TransportProbe();
const started: AmendsProcess[] = [];
const roles = ['worker', 'relay', 'view'] as const;

beforeAll(() => {
  requireBuild();
  const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
  if (promtool.status !== 0)
    throw new Error('promtool is not installed: run scripts/bootstrap.sh (Debian package prometheus)');
});
afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => p.stop('SIGKILL').catch(() => {})));
});
afterAll(async () => {
  await probe.close();
  await deleteTestTopics(topics);
});

async function metricsText(p: AmendsProcess): Promise<string> {
  const line = await p.waitForLog('metrics_listening');
  const response = await fetch(`http://${line.address as string}/metrics`);
  expect(response.status).toBe(200);
  return response.text();
}

function promtoolCheck(text: string): { status: number | null; output: string } {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 30_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('promtool check metrics', () => {
  it("is silent on every role's /metrics, each role set up by a settings file alone", async () => {
    const source = await createBoundSource(topics, twoKeysConfig);
    const story =
      readFileSync(fixturePath('before.jsonl'), 'utf8') + readFileSync(fixturePath('second-key.jsonl'), 'utf8');
    const records = await loadText(source, 'story', story);
    const settings = scratchFile(
      `${source.namespace}.conf`,
      [
        `manifest=${source.manifestPath}`,
        `database-url=${testDatabaseUrl}`,
        `brokers=${testBrokers}`,
        'metrics-addr=127.0.0.1:0',
        '',
      ].join('\n'),
    );
    const env = { AMENDS_DATABASE_URL: '', AMENDS_BROKERS: '' };
    for (const role of roles) started.push(new AmendsProcess(role, ['--settings', settings], env));
    await probe.waitDecided(source.namespace, records);
    // The output topic's ends once the relay has published everything: read earlier, they can
    // miss a partition still to come, and the view then never "reaches" them.
    await probe.waitPublished(source.namespace, (await probe.outbox(source.namespace)).total);
    await probe.waitViewCaughtUp(source);

    for (const [i, role] of roles.entries()) {
      const text = await metricsText(started[i] as AmendsProcess);
      // The role's own series are there, so the linter judged them and not an empty page.
      const own = {
        worker: 'amends_records_decided_total{',
        relay: 'amends_relay_published_total{',
        view: 'amends_view_records_total{',
      };
      expect(text, role).toContain(own[role]);
      expect(text, role).not.toMatch(/^nodejs_active_\w+_total/m);
      expect(promtoolCheck(text), role).toEqual({ status: 0, output: '' });
    }
    // The view's lag, from its consumer's cached ends: present once each partition was fetched, 0 when caught up.
    const view = started[2] as AmendsProcess;
    const lagLines = (text: string) =>
      text
        .split('\n')
        .filter((l) => l.startsWith('amends_view_lag{'))
        .sort();
    const ns = source.namespace;
    const want = [0, 1].map((p) => `amends_view_lag{namespace="${ns}",partition="${p}"} 0`);
    const deadline = Date.now() + 30_000;
    let lines = lagLines(await metricsText(view));
    while (JSON.stringify(lines) !== JSON.stringify(want) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      lines = lagLines(await metricsText(view));
    }
    expect(lines).toEqual(want);
  });

  it('would print what prom-client registers by default (the check can fail)', () => {
    const gauge =
      '# HELP nodejs_active_handles_total Total number of active handles.\n# TYPE nodejs_active_handles_total gauge\nnodejs_active_handles_total 3\n';
    const { status, output } = promtoolCheck(gauge);
    expect(status).not.toBe(0);
    expect(output).toMatch(/nodejs_active_handles_total non-counter metrics should not have "_total" suffix/);
  });
});
