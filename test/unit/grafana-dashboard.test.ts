/**
 * deploy/grafana/amends-dashboard.json: valid JSON of a Grafana dashboard (panels on the grid,
 * each query with its datasource and refId), every metric it queries one that amends exposes
 * (the registries of worker, relay and view, the verify wrapper's file, Prometheus's `up`).
 * There is no Grafana here to import it into; its own schema checks are not run.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../support/amendsctl-process.js';
import { amendsMetricNames, selectedMetricNames } from '../support/metric-names.js';

interface Panel {
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type: string; uid: string };
  targets?: { expr: string; refId: string }[];
}

const dashboard = JSON.parse(readFileSync(join(repoRoot, 'deploy/grafana/amends-dashboard.json'), 'utf8')) as {
  uid: string;
  title: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: { name: string; type: string; definition?: string }[] };
};
const queried = dashboard.panels.filter((p) => p.type !== 'row');

describe('the Grafana dashboard', () => {
  it('is a dashboard with a datasource and a namespace variable, its panels on the 24-column grid', () => {
    expect(dashboard).toMatchObject({ uid: 'amends-overview', title: 'amends' });
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(30);
    expect(dashboard.templating.list.map((v) => `${v.type}:${v.name}`)).toEqual([
      'datasource:datasource',
      'query:namespace',
    ]);
    for (const p of dashboard.panels) {
      expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
      expect(p.gridPos.w * p.gridPos.h, p.title).toBeGreaterThan(0);
    }
    const ids = dashboard.panels.map((p) => (p as unknown as { id: number }).id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('queries only metrics amends exposes, each panel from the chosen datasource', () => {
    const known = amendsMetricNames();
    const variable = dashboard.templating.list.find((v) => v.name === 'namespace')?.definition ?? '';
    const exprs = [
      ...queried.flatMap((p) => (p.targets ?? []).map((t) => ({ title: p.title, expr: t.expr }))),
      { title: 'variable namespace', expr: /label_values\((\w+),/.exec(variable)?.[1] ?? '' },
    ];
    expect(exprs.length).toBeGreaterThan(20);
    for (const { title, expr } of exprs) {
      const names = selectedMetricNames(expr);
      expect(names.length, `${title}: ${expr}`).toBeGreaterThan(0);
      for (const name of names) expect(known.has(name), `${title} queries ${name}`).toBe(true);
    }
    for (const p of queried) {
      expect(p.datasource?.uid, p.title).toBe(`\${datasource}`);
      expect(new Set(p.targets?.map((t) => t.refId)).size, p.title).toBe(p.targets?.length);
    }
  });

  it("shows each of amends' own metrics somewhere", () => {
    const shown = new Set(queried.flatMap((p) => (p.targets ?? []).flatMap((t) => selectedMetricNames(t.expr))));
    const own = [...amendsMetricNames()].filter((n) => n.startsWith('amends_') && !/_(sum|count)$/.test(n));
    expect(own.filter((n) => !shown.has(n))).toEqual(['amends_verify_exit_code']);
  });
});
