/**
 * `amendsctl chaos [--database single|ha] [--duration S] [--seed N] [--json]` (issues 17, 33):
 * a seeded chaos run on a private stack of its own, ending in the verifier. The run is src/showcase/chaos-run.ts; this
 * file is the command: flags, progress lines, Ctrl-C, the report and the exit code.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { operationalError, usageError } from '../../kernel/amends-error.js';
import { errorMessage } from '../../kernel/error-message.js';
import {
  type ChaosReport,
  judge,
  reportJson,
  unavailability,
  unavailabilityLine,
  unknownLine,
  writeChaosReport,
} from '../../showcase/chaos-report.js';
import { runChaos } from '../../showcase/chaos-run.js';
import { type ChaosDatabase, chaosDatabases } from '../../showcase/nemesis-plan.js';
import { PrivateStack } from '../../showcase/private-stack.js';
import { defineCommand } from '../command.js';
import { exitCodes } from '../exit.js';
import { refuseArguments } from '../flag-check.js';

const defaults = {
  duration: 60,
  outageBudgetS: 30,
  rate: 40,
  // Below the kernel's ephemeral range (32768-60999 on Linux), where a client's outgoing
  // connection could take a killed broker's port (private-stack.ts).
  brokerPort: 27092,
  pgPort: 27432,
  drainBudgetS: 180,
};

export const chaosCommand = defineCommand({
  name: 'chaos',
  summary: 'seeded faults against a private 3-broker cluster and database, ending in the verifier',
  help: `chaos [--database single|ha] [--duration ${defaults.duration}] [--seed N] [--json]

  Starts a private 3-broker KRaft cluster and a PostgreSQL of its own under .stack/chaos
  (brokers on ${defaults.brokerPort}, ${defaults.brokerPort + 100}, ${defaults.brokerPort + 200}; database on ${defaults.pgPort}: a user's stack is never touched),
  creates a replicated source and output topic (RF 3, min.insync.replicas 2), and runs two
  workers, a relay and a view under a supervisor that restarts whatever exits. For the
  duration it loads seeded ledger traffic (posts, corrections, cancels, redeliveries, stale
  revisions, garbage) with source-load and injects a seeded fault every few seconds:
  SIGKILL or SIGSTOP of a process, SIGKILL of a source partition's leader broker (restarted
  after a few seconds), PostgreSQL crashed and restarted, PostgreSQL away past one
  operation's 20 s budget but within the outage budget, worker-a's database connections cut,
  the reply to one of its COMMITs dropped. Then it heals everything, drains, stops the
  processes, runs amendsctl verify and stops the stack.

  --database ha runs the database as Patroni's two PostgreSQL nodes (synchronous
  replication, etcd, HAProxy on ${defaults.pgPort}; ports up to ${defaults.pgPort + 22}), and its database faults are
  failovers instead of one server's crash and absence: the primary's postmaster SIGKILLed,
  a patronictl switchover, and the primary cut off from etcd and from HAProxy until the
  standby is promoted. A write probe measures each database fault's unavailability (fault
  -> first commit on the new primary, the longest pause, amends' own first commit), and the
  workers' logs show how each unknown commit outcome was resolved: both are in the report.

  The same seed plans the same faults and the same load (what the machine does in between
  differs). Report: artifacts/chaos/<run-id>/report.json and report.md, with every process's
  log. Exit 0 only on PASS: the verifier passed and no process exited without a fault that
  kills it; 3 FAIL, 4 INCOMPLETE (not drained), 1 when the run could not finish.

  Flags
    --database D         single (one PostgreSQL, the default) or ha (Patroni, etcd, HAProxy)
    --duration S         seconds of load and faults (default ${defaults.duration}; npm run chaos: 600)
    --seed N             the faults' and the load's seed (default: random, printed)
    --outage-budget-s S  the processes' outage budget (default ${defaults.outageBudgetS})
    --rate N             records per second loaded (default ${defaults.rate})
    --broker-port P      the first broker's port; the others at +100, +200 (default ${defaults.brokerPort})
    --pg-port P          the database's port (default ${defaults.pgPort})
    --drain-budget-s S   how long the chain may take to drain after the faults (default ${defaults.drainBudgetS})
    --json               print the report as one JSON document on stdout

  Examples
    $ amendsctl chaos --duration 60 --seed 7
    $ amendsctl chaos --database ha --duration 120 --seed 3`,
  flags: {
    database: { type: 'string', default: 'single' },
    duration: { type: 'number', default: defaults.duration },
    seed: { type: 'number' },
    outageBudgetS: { type: 'number', default: defaults.outageBudgetS },
    rate: { type: 'number', default: defaults.rate },
    brokerPort: { type: 'number', default: defaults.brokerPort },
    pgPort: { type: 'number', default: defaults.pgPort },
    drainBudgetS: { type: 'number', default: defaults.drainBudgetS },
    json: { type: 'boolean', default: false },
  },
  async run(cli, io) {
    refuseArguments(cli.input);
    const f = cli.flags;
    checkRanges(f);
    const database = f.database as ChaosDatabase;
    if (!chaosDatabases.includes(database)) {
      throw usageError(`--database must be one of ${chaosDatabases.join(', ')}, got ${JSON.stringify(f.database)}`);
    }
    const seed = f.seed ?? randomInt(0, 2 ** 31 - 1);
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').toLowerCase();
    const runId = `${stamp}-${randomBytes(2).toString('hex')}`;
    const runDir = resolve('artifacts', 'chaos', runId);
    mkdirSync(runDir, { recursive: true });
    const note = (line: string) => io.stderr.write(`chaos: ${line}\n`);
    note(`run ${runId}, seed ${seed}: evidence in ${relative(process.cwd(), runDir)}`);
    const report = emptyReport(runId, seed, database, f);
    const abort = new AbortController();
    const onInterrupt = () =>
      abort.abort(operationalError('interrupted: healing, then stopping every process and the stack'));
    process.on('SIGINT', onInterrupt);
    process.on('SIGTERM', onInterrupt);
    try {
      await runChaos(
        {
          runId,
          runDir,
          seed,
          durationS: f.duration,
          outageBudgetS: f.outageBudgetS,
          recordsPerSecond: f.rate,
          brokerPort: f.brokerPort,
          pgPort: f.pgPort,
          database,
          drainBudgetS: f.drainBudgetS,
          note,
          signal: abort.signal,
        },
        report,
      );
    } catch (error) {
      report.error = abort.signal.aborted ? 'interrupted (Ctrl-C)' : errorMessage(error).split('\n', 1)[0];
    } finally {
      process.off('SIGINT', onInterrupt);
      process.off('SIGTERM', onInterrupt);
    }
    report.finished_at = new Date().toISOString();
    Object.assign(report, judge(report));
    writeChaosReport(runDir, report);
    keepOrRemoveStack(report, note);
    if (f.json) io.stdout.write(`${JSON.stringify(reportJson(report))}\n`);
    else io.stdout.write(summary(report, runDir));
    return {
      PASS: exitCodes.ok,
      FAIL: exitCodes.verifyFail,
      INCOMPLETE: exitCodes.verifyIncomplete,
      ERROR: exitCodes.failure,
    }[report.verdict];
  },
});

/**
 * A passing run's stack directory is removed; any other keeps it (its brokers', Patroni's and
 * PostgreSQL's logs) until the next run.
 */
function keepOrRemoveStack(report: ChaosReport, note: (line: string) => void): void {
  if (report.stack === null) return;
  if (report.verdict === 'PASS' && PrivateStack.removeStopped(report.stack.dir)) return;
  note(`the private stack's directory stays for its logs until the next run: ${report.stack.dir}`);
}

type NumericFlag = 'duration' | 'seed' | 'outageBudgetS' | 'rate' | 'brokerPort' | 'pgPort' | 'drainBudgetS';

/** Every numeric flag given must be an integer within its range. */
function checkRanges(f: Partial<Record<NumericFlag, number>>): void {
  const whole = (name: string, value: number | undefined, min: number, max: number) => {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < min || value > max)) {
      throw usageError(`--${name} must be an integer in [${min}, ${max}], got ${value}`);
    }
  };
  whole('duration', f.duration, 10, 86_400);
  whole('seed', f.seed, 0, 2 ** 31 - 1);
  whole('outage-budget-s', f.outageBudgetS, 1, 3_600);
  whole('rate', f.rate, 1, 10_000);
  whole('broker-port', f.brokerPort, 1024, 65_000);
  whole('pg-port', f.pgPort, 1024, 65_000);
  whole('drain-budget-s', f.drainBudgetS, 10, 3_600);
}

/** The report before the run: ERROR until the run and the verdict fill it in. */
function emptyReport(
  runId: string,
  seed: number,
  database: ChaosDatabase,
  f: { duration: number; outageBudgetS: number; rate: number },
): ChaosReport {
  return {
    run_id: runId,
    database,
    seed,
    duration_s: f.duration,
    outage_budget_s: f.outageBudgetS,
    records_per_second: f.rate,
    started_at: new Date().toISOString(),
    finished_at: '',
    verdict: 'ERROR',
    reasons: [],
    replay: `amendsctl chaos${database === 'ha' ? ' --database ha' : ''} --duration ${f.duration} --seed ${seed}`,
    stack: null,
    faults: [],
    load: [],
    load_summary: null,
    supervisor: new Map(),
    unexpected_exits: [],
    drain_s: null,
    verify: null,
    unknown_outcomes: null,
  };
}

function summary(report: ChaosReport, runDir: string): string {
  const injected = report.faults.filter((x) => x.injected_s !== null);
  const kinds = new Set(injected.map((x) => x.kind));
  const counts = (report.verify?.counts ?? {}) as Record<string, unknown>;
  return [
    `chaos ${report.run_id} (database ${report.database}, seed ${report.seed}): ${report.verdict}`,
    `  ${injected.length} faults of ${kinds.size} kinds (${[...kinds].join(', ')})`,
    `  restarts: ${[...report.supervisor].map(([n, r]) => `${n} ${r.starts - 1}`).join(', ')}; unexpected exits: ${report.unexpected_exits.length}`,
    `  verify: ${Object.entries(counts)
      .map(([k, v]) => `${k} ${String(v)}`)
      .join(', ')}`,
    ...unavailability(report).map((r) => `  ${unavailabilityLine(r)}`),
    `  ${unknownLine(report.unknown_outcomes)}`,
    ...report.reasons.map((r) => `  reason: ${r}`),
    `  replay: ${report.replay}`,
    `  report: ${relative(process.cwd(), join(runDir, 'report.md'))} and report.json`,
    '',
  ].join('\n');
}
