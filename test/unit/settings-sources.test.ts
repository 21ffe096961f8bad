/**
 * Worker, relay and view settings from three sources that agree (settings-sources.ts): each
 * setting given as a flag, as its AMENDS_ variable, or as a line of the settings file ends in
 * the same effective value, read by the code that uses it (metricsAddressFrom, resolveBrokers,
 * databaseUrlFrom, …); and one precedence, flag > environment > file > default. Runs the real
 * dispatch (meow) with the worker's real flags, the command's `run` replaced by a probe.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { defineCommand } from '../../src/cli/command.js';
import { workerCommand } from '../../src/cli/commands/worker.js';
import { runExecutable } from '../../src/cli/dispatch.js';
import { loadKafkaClientSettings } from '../../src/io/kafka/client-settings.js';
import { resolveBrokers } from '../../src/io/kafka/kafka-connection.js';
import { logLevelFrom } from '../../src/io/process/json-log.js';
import { metricsAddressFrom } from '../../src/io/process/metrics-server.js';
import { databaseUrlFrom } from '../../src/io/store/postgres.js';

const scratch = mkdtempSync(join(tmpdir(), 'amends-settings-'));
let files = 0;
function settingsFile(text: string): string {
  const path = join(scratch, `amends-${++files}.conf`);
  writeFileSync(path, text);
  return path;
}

interface Seen {
  flags: Record<string, unknown>;
  env: NodeJS.ProcessEnv;
}

/** `amends worker ARGS` with the environment `env`; the probe records what `run` was given. */
async function resolved(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; seen?: Seen; err: string }> {
  let seen: Seen | undefined;
  let err = '';
  const probe = defineCommand({
    ...workerCommand,
    run: async (cli, io) => {
      seen = { flags: cli.flags as Record<string, unknown>, env: io.env };
      return 0;
    },
  });
  const sink = (write: (s: string) => void) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        write(chunk.toString('utf8'));
        done();
      },
    });
  const io = { stdout: sink(() => {}), stderr: sink((s) => (err += s)), env };
  const exe = { program: 'amends', description: 'test', commands: [probe] };
  const code = await runExecutable(exe, ['worker', ...args], io);
  return { code, seen, err };
}

const kafkaFile = settingsFile('socket.timeout.ms=12345\n');

/**
 * Each setting: a value as text, and its effective value read the way the command reads it
 * (from the flag the dispatcher hands over, or the environment it runs with).
 */
const settings: { key: string; flag?: string; value: string; effective: (s: Seen) => unknown; want: unknown }[] = [
  {
    key: 'manifest',
    flag: '--manifest',
    value: '/etc/amends/ours.json',
    effective: (s) => s.flags.manifest,
    want: '/etc/amends/ours.json',
  },
  {
    key: 'instance-id',
    flag: '--instance-id',
    value: 'host-a-1',
    effective: (s) => s.flags.instanceId,
    want: 'host-a-1',
  },
  { key: 'outage-budget-s', flag: '--outage-budget-s', value: '7', effective: (s) => s.flags.outageBudgetS, want: 7 },
  { key: 'batch-size', flag: '--batch-size', value: '500', effective: (s) => s.flags.batchSize, want: 500 },
  {
    key: 'session-timeout-ms',
    flag: '--session-timeout-ms',
    value: '9000',
    effective: (s) => s.flags.sessionTimeoutMs,
    want: 9000,
  },
  {
    key: 'brokers',
    flag: '--brokers',
    value: 'k1:9092,k2:9092',
    effective: (s) => resolveBrokers(s.flags.brokers as string | undefined, s.env),
    want: 'k1:9092,k2:9092',
  },
  {
    key: 'kafka-config',
    flag: '--kafka-config',
    value: kafkaFile,
    effective: (s) => loadKafkaClientSettings(s.flags.kafkaConfig as string | undefined, s.env).properties,
    want: { 'socket.timeout.ms': '12345' },
  },
  {
    key: 'metrics-addr',
    flag: '--metrics-addr',
    value: '127.0.0.1:9464',
    effective: (s) => metricsAddressFrom(s.flags.metricsAddr as string | undefined, s.env),
    want: { host: '127.0.0.1', port: 9464 },
  },
  {
    key: 'log-level',
    flag: '--log-level',
    value: 'warn',
    effective: (s) => logLevelFrom(s.flags.logLevel as string | undefined, s.env),
    want: 'warn',
  },
  {
    key: 'database-url',
    value: 'postgres://amends:secret@db.internal:5432/amends',
    effective: (s) => databaseUrlFrom(s.env),
    want: 'postgres://amends:secret@db.internal:5432/amends',
  },
];

const variable = (key: string) => `AMENDS_${key.toUpperCase().replaceAll('-', '_')}`;
/** What the worker needs besides the setting under test, from the command line. */
const manifestArgs = (key: string) => (key === 'manifest' ? [] : ['--manifest', 'm.json']);

describe('a setting from a flag, the environment or the settings file', () => {
  for (const s of settings) {
    it(`${s.key}: the same effective value from each source`, async () => {
      const sources: [string, string[], NodeJS.ProcessEnv][] = [
        ['environment', manifestArgs(s.key), { [variable(s.key)]: s.value }],
        ['file', [...manifestArgs(s.key), '--settings', settingsFile(`${s.key}=${s.value}\n`)], {}],
        [
          'file named by AMENDS_SETTINGS',
          manifestArgs(s.key),
          { AMENDS_SETTINGS: settingsFile(`${s.key}=${s.value}\n`) },
        ],
      ];
      if (s.flag !== undefined) sources.push(['flag', [...manifestArgs(s.key), s.flag, s.value], {}]);
      for (const [source, args, env] of sources) {
        const { code, seen, err } = await resolved(args, env);
        expect(code, `${source}: ${err}`).toBe(0);
        expect(s.effective(seen as Seen), source).toEqual(s.want);
      }
    });
  }
});

describe('one precedence: flag > environment > file > default', () => {
  it('a flag wins over the environment and the file, the environment over the file', async () => {
    const file = settingsFile('outage-budget-s=3\nmetrics-addr=127.0.0.1:3\nbatch-size=300\nlog-level=error\n');
    const env = { AMENDS_OUTAGE_BUDGET_S: '2', AMENDS_METRICS_ADDR: '127.0.0.1:2', AMENDS_BATCH_SIZE: '200' };
    const args = [
      '--manifest',
      'm.json',
      '--settings',
      file,
      '--outage-budget-s',
      '1',
      '--metrics-addr',
      '127.0.0.1:1',
    ];
    const { seen } = await resolved(args, env);
    const s = seen as Seen;
    expect(s.flags.outageBudgetS).toBe(1); // flag over environment and file
    expect(metricsAddressFrom(s.flags.metricsAddr as string, s.env)?.port).toBe(1);
    expect(s.flags.batchSize).toBe(200); // environment over file
    expect(logLevelFrom(s.flags.logLevel as string | undefined, s.env)).toBe('error'); // file over default
    expect(s.flags.sessionTimeoutMs).toBe(6000); // the default, from no source
    expect(s.flags.tui).toBe(false);
  });

  it('an empty variable counts as unset, and the file then gives the value', async () => {
    const file = settingsFile('batch-size=300\ndatabase-url=postgres://a@h/d\n');
    const { seen } = await resolved(['--manifest', 'm.json', '--settings', file], {
      AMENDS_BATCH_SIZE: ' ',
      AMENDS_DATABASE_URL: '',
    });
    expect((seen as Seen).flags.batchSize).toBe(300);
    expect(databaseUrlFrom((seen as Seen).env)).toBe('postgres://a@h/d');
  });

  it('a file value may name a variable or a file, and the secret is never shown', async () => {
    const secret = settingsFile('postgres://amends:hush@db/amends\n');
    const file = settingsFile(`database-url=\${file:${secret}}\ninstance-id=\${env:HOST_ID}\n`);
    const { seen } = await resolved(['--manifest', 'm.json', '--settings', file], { HOST_ID: 'h7' });
    expect(databaseUrlFrom((seen as Seen).env)).toBe('postgres://amends:hush@db/amends');
    expect((seen as Seen).flags.instanceId).toBe('h7');
  });
});

describe('settings files refused, exit 2, naming the file and the line', () => {
  const refused = async (text: string, env: NodeJS.ProcessEnv = {}) => {
    const path = settingsFile(text);
    const { code, err } = await resolved(['--manifest', 'm.json', '--settings', path], env);
    return { code, err: err.replace(path, 'F') };
  };

  it('a key no process takes', async () => {
    const { code, err } = await refused('# comment\nbatch-size=5\nbatchsize=5\n');
    expect(code).toBe(2);
    expect(err).toMatch(/^amends worker: --settings F line 3: unknown setting batchsize \(known: manifest, /);
  });

  it('a key given twice', async () => {
    const { code, err } = await refused('log-level=info\nlog-level=debug\n');
    expect(code).toBe(2);
    expect(err).toMatch(/--settings F line 2: log-level is set twice \(also on line 1\); keep one/);
  });

  it('a number that is not one, from the file or the environment', async () => {
    expect((await refused('batch-size=lots\n')).err).toMatch(
      /--settings F line 1: batch-size: expected a number, not "lots"/,
    );
    const { code, err } = await resolved(['--manifest', 'm.json'], { AMENDS_OUTAGE_BUDGET_S: '5s' });
    expect(code).toBe(2);
    expect(err).toMatch(/^amends worker: AMENDS_OUTAGE_BUDGET_S: expected a number, not "5s"/);
  });

  it('a reference to a variable that is not set, without showing any value', async () => {
    const { code, err } = await refused(`database-url=\${env:NOT_SET_ANYWHERE}\n`);
    expect(code).toBe(2);
    expect(err).toMatch(/line 1: database-url names \$\{env:NOT_SET_ANYWHERE\}, which is not set/);
  });

  it('a file that cannot be read', async () => {
    const { code, err } = await resolved(['--manifest', 'm.json'], { AMENDS_SETTINGS: join(scratch, 'missing.conf') });
    expect(code).toBe(2);
    expect(err).toMatch(/--settings \S+missing\.conf: cannot read the file \(ENOENT\)/);
  });

  it('the example file of deploy/ is accepted as it is', async () => {
    const example = join(import.meta.dirname, '../../deploy/amends.conf.example');
    const urlFile = settingsFile('postgres://amends@db/amends\n');
    // The example names /etc/amends/database-url; point ${file:…} at a real file instead.
    const { readFileSync } = await import('node:fs');
    const text = readFileSync(example, 'utf8').replace('/etc/amends/database-url', urlFile);
    const { code, seen, err } = await resolved(['--settings', settingsFile(text)], {});
    expect(code, err).toBe(0);
    expect((seen as Seen).flags).toMatchObject({ manifest: '/etc/amends/ours.manifest.json', batchSize: 2000 });
    expect(databaseUrlFrom((seen as Seen).env)).toBe('postgres://amends@db/amends');
  });
});
