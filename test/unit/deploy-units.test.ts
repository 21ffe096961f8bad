/**
 * deploy/systemd/'s units, checked with the tool their users check them with: `systemd-analyze
 * verify`, which needs no running systemd (it loads the units as PID 1 would, and checks
 * every key, every specifier and that ExecStart's program exists and is executable). It runs
 * on an image of the installed layout in a temporary root: the host's own unit directory
 * (the targets the units name), the units in /etc/systemd/system, and the package's files
 * where `npm install --global amends` puts them (/usr/local/bin/amends, …). Any line it prints
 * (an unknown key is only a warning, exit 0) fails the test.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/amendsctl-process.js';

const unitsDir = join(repoRoot, 'deploy/systemd');
const units = readdirSync(unitsDir).filter((f) => /\.(service|timer)$/.test(f));
/** Where the units expect the package (npm's global prefix on Debian's /usr/local). */
const installed = '/usr/local/lib/node_modules/amends';

function verify(root: string, names: string[]) {
  const run = spawnSync('systemd-analyze', ['verify', `--root=${root}`, ...names], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: run.status, output: `${run.stdout ?? ''}${run.stderr ?? ''}`, error: run.error };
}

/** A root with the host's units, ours, and the package installed as the units expect it. */
function installedRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'amends-units-'));
  cpSync('/lib/systemd/system', join(root, 'lib/systemd/system'), { recursive: true });
  mkdirSync(join(root, 'etc/systemd/system'), { recursive: true });
  for (const unit of units) cpSync(join(unitsDir, unit), join(root, 'etc/systemd/system', unit));
  for (const bin of ['amends', 'amendsctl']) {
    cpSync(join(repoRoot, 'bin', bin), join(root, 'usr/local/bin', bin));
    cpSync(join(repoRoot, 'bin', bin), join(root, installed, 'bin', bin));
  }
  cpSync(join(repoRoot, 'deploy/amends-verify-textfile'), join(root, installed, 'deploy/amends-verify-textfile'));
  return root;
}

beforeAll(() => {
  const probe = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined)
    throw new Error('systemd-analyze is missing: run scripts/bootstrap.sh (Debian package systemd)');
});

describe('the systemd units', () => {
  it('are the three processes, templated, and the verify service with its timer', () => {
    expect(units.sort()).toEqual([
      'amends-relay@.service',
      'amends-verify@.service',
      'amends-verify@.timer',
      'amends-view@.service',
      'amends-worker@.service',
    ]);
  });

  it('pass systemd-analyze verify as instances, printing nothing', () => {
    const root = installedRoot();
    const instances = ['amends-worker@1.service', 'amends-relay@1.service', 'amends-view@1.service'];
    const { status, output } = verify(root, [...instances, 'amends-verify@ours.service', 'amends-verify@ours.timer']);
    expect(output).toBe('');
    expect(status).toBe(0);
  });

  it('would fail on what systemd refuses (the check can fail)', () => {
    const root = installedRoot();
    const broken = readFileSync(join(unitsDir, 'amends-worker@.service'), 'utf8')
      .replace('RestartSec=5s', 'RestartSec=5s\nRestartEvery=5s')
      .replace('/usr/local/bin/amends worker', '/usr/local/bin/amends-missing worker');
    writeFileSync(join(root, 'etc/systemd/system/amends-broken@.service'), broken);
    const { status, output } = verify(root, ['amends-broken@1.service']);
    expect(output).toMatch(/Unknown key 'RestartEvery'/);
    expect(output).toMatch(/amends-missing is not executable/);
    expect(status).not.toBe(0);
  });

  it('restart on failure but not on a usage error, and run the process with the instance id', () => {
    for (const role of ['worker', 'relay', 'view']) {
      const text = readFileSync(join(unitsDir, `amends-${role}@.service`), 'utf8');
      expect(text).toMatch(/^Restart=on-failure$/m);
      expect(text).toMatch(/^RestartPreventExitStatus=2$/m);
      expect(text).toMatch(
        new RegExp(`^ExecStart=/usr/local/bin/amends ${role} --instance-id %H-%i --no-migrate$`, 'm'),
      );
      expect(text).toMatch(/^EnvironmentFile=\/etc\/amends\/amends\.env$/m);
      expect(text).toMatch(/^Environment=AMENDS_SETTINGS=\/etc\/amends\/amends\.conf$/m);
      // V8's JIT writes executable memory: this option would kill node at start.
      expect(text).not.toMatch(/^MemoryDenyWriteExecute=yes/m);
    }
  });
});
