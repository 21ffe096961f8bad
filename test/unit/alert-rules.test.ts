/**
 * deploy/prometheus/amends-alerts.yml, checked with the tool its users check it with: `promtool
 * check rules`, and `promtool test rules` on the synthetic series of amends-alerts.test.yml and
 * amends-verify-alerts.test.yml (lag growing, partitions failing or taken over, outages, relay
 * or view behind, verify FAIL); every metric a rule selects exists in amends' registries. The
 * verify wrapper (deploy/amends-verify-textfile) writes what those rules read: run here with a
 * stand-in amendsctl that exits with each verdict's code, its file must pass `promtool check
 * metrics` and say the verdict.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/amendsctl-process.js';
import { amendsMetricNames, selectedMetricNames } from '../support/metric-names.js';

const rulesDir = join(repoRoot, 'deploy/prometheus');
const rulesFile = join(rulesDir, 'amends-alerts.yml');

function promtool(args: string[], input?: string) {
  const run = spawnSync('promtool', args, { cwd: rulesDir, input, encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, output: `${run.stdout ?? ''}${run.stderr ?? ''}`, error: run.error };
}

beforeAll(() => {
  const { error } = promtool(['--version']);
  if (error !== undefined)
    throw new Error('promtool is not installed: run scripts/bootstrap.sh (Debian package prometheus)');
});

/** Each rule's `expr`, one line or a `|` block (the file's own two forms). */
function ruleExpressions(yaml: string): { alert: string; expr: string }[] {
  const out: { alert: string; expr: string }[] = [];
  const lines = yaml.split('\n');
  let alert = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const named = /^\s*- alert: (\w+)/.exec(line);
    if (named !== null) alert = named[1] as string;
    const expr = /^(\s*)expr: (.*)$/.exec(line);
    if (expr === null) continue;
    if (expr[2] !== '|') {
      out.push({ alert, expr: expr[2] as string });
      continue;
    }
    const block: string[] = [];
    const deeper = new RegExp(`^\\s{${(expr[1] as string).length + 1},}\\S`);
    while (i + 1 < lines.length && deeper.test(lines[i + 1] as string)) block.push((lines[++i] as string).trim());
    out.push({ alert, expr: block.join(' ') });
  }
  return out;
}

describe('the alert rules', () => {
  it('pass promtool check rules', () => {
    const { status, output } = promtool(['check', 'rules', rulesFile]);
    expect(output).toMatch(/SUCCESS: \d+ rules found/);
    expect(status, output).toBe(0);
  });

  it('pass promtool test rules on synthetic series', () => {
    const { status, output } = promtool(['test', 'rules', 'amends-alerts.test.yml', 'amends-verify-alerts.test.yml']);
    expect(status, output).toBe(0);
    expect(output.match(/SUCCESS/g)).toHaveLength(2);
  });

  it('select only metrics amends has', () => {
    const known = amendsMetricNames();
    const rules = ruleExpressions(readFileSync(rulesFile, 'utf8'));
    expect(rules.length).toBeGreaterThan(10);
    for (const { alert, expr } of rules) {
      const names = selectedMetricNames(expr);
      expect(names.length, `${alert}: ${expr}`).toBeGreaterThan(0);
      for (const name of names) expect(known.has(name), `${alert} selects ${name}`).toBe(true);
    }
  });

  it('are tested each at least once', () => {
    const tested = ['amends-alerts.test.yml', 'amends-verify-alerts.test.yml']
      .map((f) => readFileSync(join(rulesDir, f), 'utf8'))
      .join('\n');
    for (const { alert } of ruleExpressions(readFileSync(rulesFile, 'utf8'))) {
      expect(tested, alert).toMatch(new RegExp(`alertname: ${alert}\\n\\s+exp_alerts:\\n\\s+- exp_labels`));
    }
  });
});

describe('deploy/amends-verify-textfile', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'amends-verify-textfile-'));
  const manifest = join(scratch, 'ours.manifest.json');
  writeFileSync(manifest, JSON.stringify({ source_topic: 't', config: { namespace: 'ours-1' } }));

  /** The wrapper with a stand-in amendsctl that records its arguments and exits `code`. */
  function wrapped(code: number, out: string) {
    const fake = join(scratch, `amendsctl-${code}`);
    writeFileSync(fake, `#!/bin/sh\necho "$@" > ${fake}.args\nexit ${code}\n`);
    chmodSync(fake, 0o755);
    const script = join(repoRoot, 'deploy/amends-verify-textfile');
    const run = spawnSync(script, [manifest, out, '--wait', '5'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', AMENDSCTL: fake },
    });
    return { status: run.status, args: readFileSync(`${fake}.args`, 'utf8').trim() };
  }

  for (const [code, verdict] of [
    [0, 'PASS'],
    [3, 'FAIL'],
    [4, 'INCOMPLETE'],
    [1, 'ERROR'],
  ] as const) {
    it(`exit ${code}: ${verdict}, in a file promtool check metrics accepts`, () => {
      const out = join(scratch, `verify-${code}.prom`);
      const { status, args } = wrapped(code, out);
      expect(status).toBe(code);
      expect(args).toBe(`verify --manifest ${manifest} --wait 5`);
      const text = readFileSync(out, 'utf8');
      for (const v of ['PASS', 'FAIL', 'INCOMPLETE', 'ERROR']) {
        expect(text).toContain(`amends_verify_verdict{namespace="ours-1",verdict="${v}"} ${v === verdict ? 1 : 0}\n`);
      }
      expect(text).toContain(`amends_verify_exit_code{namespace="ours-1"} ${code}\n`);
      expect(text).toMatch(/^amends_verify_last_run_timestamp_seconds\{namespace="ours-1"\} \d{10}$/m);
      expect(promtool(['check', 'metrics'], text)).toMatchObject({ status: 0, output: '' });
    });
  }

  it('refuses a file that is no manifest, writing nothing', () => {
    const out = join(scratch, 'none.prom');
    const run = spawnSync(join(repoRoot, 'deploy/amends-verify-textfile'), [join(scratch, 'missing.json'), out], {
      encoding: 'utf8',
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/is not a readable amends manifest/);
    expect(() => readFileSync(out)).toThrow(/ENOENT/);
  });
});
