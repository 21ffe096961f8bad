/**
 * The HA database (issue 33, item 1): `scripts/stack.sh up --database ha` in a private
 * directory on private ports (test/support/private-ha-stack.ts). node-postgres reaches the
 * primary through HAProxy on the usual URL and a replica on the next port, and the primary
 * has a synchronous standby. A writer then commits rows through that one URL, each on a fresh
 * connection, while Patroni switches over and later while the primary's postmaster is
 * SIGKILLed: the same URL reaches the promoted node within the bounds (the longest
 * pause between acknowledged writes ≤ 5 s for the switchover; fault → first acknowledged
 * write ≤ 15 s for the kill), and every acknowledged row is still there (synchronous
 * replication). The switchover comes first because its old primary rejoins faster than a
 * crashed one, and the kill needs a synchronous standby to fail over to.
 * The figures are printed; timings for the notes need an idle machine. The stack is stopped
 * (and its directory removed) afterwards whatever the outcome.
 *
 * Then the database goes back in time under the amends chain (issue 33, item 3: two workers,
 * the relay and the view from dist/, the shared broker, small loads): first an asynchronous
 * failover whose standby is certain to lack the last commits (its WAL sender stopped), claims
 * of a rebalance among them; then a base backup taken mid-load and restored in place of the
 * primary's data. Each time the database loses decisions, versions, claims, relay cursors and
 * view rows that the output topic and the view had already seen; no process may exit, the lost
 * records are decided again, what the outbox holds is published again (identical copies that
 * the view counts as duplicates), and `amendsctl verify` passes.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuild } from '../support/amendsctl-process.js';
import {
  baseBackup,
  crashPrimary,
  primaryAnswering,
  primaryOf,
  RollbackChain,
  replicateAsynchronously,
  restoreBackup,
  stallReplication,
  stopNode,
  until,
} from '../support/ha-rollback.js';
import { deleteTestTopics, endOffsets } from '../support/kafka-test-tools.js';
import { haStartBudgetMs, PrivateHaStack } from '../support/private-ha-stack.js';
import { stopAllAmends } from '../support/transport-process.js';

const killBoundMs = 15_000;
const switchoverBoundMs = 5_000;
/** A writer's attempt gives up after this long: a hung attempt must not hide the first good one. */
const attemptTimeoutMs = 1_000;
/** How long the old primary may take to come back as the synchronous standby (pg_rewind, restart). */
const rejoinBudgetMs = 45_000;

let stack: PrivateHaStack | undefined;
/** The amends chain of the going-back-in-time cases: started by the first, kept by the second. */
let chain: RollbackChain | undefined;
const topics = new Set<string>();

function started(): PrivateHaStack {
  if (!stack) throw new Error('the HA stack did not start (see beforeAll)');
  return stack;
}

async function query<T extends pg.QueryResultRow>(config: string | pg.ClientConfig, text: string): Promise<T[]> {
  const client = new pg.Client(config);
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

interface Ack {
  id: number;
  /** The node's PostgreSQL port that committed it. */
  port: number;
  at: number;
}

/** Commits one row after another through `url`, each on a fresh connection, until stopped. */
class Writer {
  readonly acks: Ack[] = [];
  private nextId: number;
  private stopped = false;
  private done: Promise<void> = Promise.resolve();

  constructor(
    private readonly url: string,
    firstId: number,
  ) {
    this.nextId = firstId;
  }

  start(): void {
    this.done = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }

  /** Waits until a row is acknowledged by a node other than `port`, after `since`. */
  async firstAckElsewhere(port: number, since: number, budgetMs: number): Promise<Ack> {
    const deadline = Date.now() + budgetMs;
    for (;;) {
      const ack = this.acks.find((a) => a.at >= since && a.port !== port);
      if (ack) return ack;
      if (Date.now() > deadline) throw new Error(`no write reached a node other than :${port} within ${budgetMs} ms`);
      await sleep(50);
    }
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const id = this.nextId++;
      const client = new pg.Client({
        connectionString: this.url,
        connectionTimeoutMillis: attemptTimeoutMs,
        query_timeout: attemptTimeoutMs,
      });
      client.on('error', () => {});
      try {
        await client.connect();
        const { rows } = await client.query<{ port: number }>(
          'INSERT INTO ha_probe (id) VALUES ($1) RETURNING inet_server_port() AS port',
          [id],
        );
        this.acks.push({ id, port: rows[0]?.port ?? 0, at: Date.now() });
      } catch {
        // Refused, cut or timed out: its outcome is unknown, and it is not counted as acknowledged.
      } finally {
        await client.end().catch(() => {});
      }
      await sleep(50);
    }
  }
}

/**
 * Strikes with `fault` while a writer commits through the usual URL: from the writer's first
 * acknowledged row until a row is acknowledged by another node than the primary of before
 * (within the kill's bound and a margin), and half a second more. The fault's time is taken
 * just before it is started.
 */
async function writingDuring(
  firstId: number,
  fault: () => Promise<void>,
): Promise<{ writer: Writer; faultAt: number }> {
  const before = await primaryPort();
  const writer = new Writer(started().databaseUrl, firstId);
  writer.start();
  let faultAt = 0;
  try {
    await writer.firstAckElsewhere(-1, 0, 10_000);
    faultAt = Date.now();
    await fault();
    await writer.firstAckElsewhere(before, faultAt, killBoundMs + 5_000);
    await sleep(500);
  } finally {
    await writer.stop();
  }
  return { writer, faultAt };
}

/** The longest time between two acknowledged writes. */
function longestPauseMs(acks: Ack[]): number {
  return acks.slice(1).reduce((max, a, i) => Math.max(max, a.at - (acks[i] as Ack).at), 0);
}

function portOf(address: string): number {
  return Number(address.split(':')[1]);
}

async function primaryPort(): Promise<number> {
  const status = await started().status();
  const primary = status.nodes.find((n) => n.role === 'primary');
  if (!primary) throw new Error(`no primary: ${JSON.stringify(status)}`);
  return portOf(primary.address);
}

/** Every acknowledged id is on the primary the usual URL reaches now. */
async function expectAllAcknowledged(writer: Writer): Promise<void> {
  const rows = await query<{ id: number }>(started().databaseUrl, 'SELECT id FROM ha_probe');
  const present = new Set(rows.map((r) => r.id));
  expect(writer.acks.filter((a) => !present.has(a.id))).toEqual([]);
}

/** Waits until one node is primary and the other its synchronous standby, HAProxy routing to each. */
async function waitForSyncStandby(): Promise<void> {
  const deadline = Date.now() + rejoinBudgetMs;
  for (;;) {
    const s = await started().status();
    const primary = s.nodes.find((n) => n.role === 'primary');
    const standby = s.nodes.find((n) => n.role === 'sync-standby');
    if (primary && standby && s.primaryRoute === primary.name && s.replicaRoute === standby.name) return;
    if (Date.now() > deadline)
      throw new Error(`no synchronous standby within ${rejoinBudgetMs} ms: ${JSON.stringify(s)}`);
    await sleep(500);
  }
}

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

describe('the HA database stack (Patroni, etcd, HAProxy)', () => {
  beforeAll(async () => {
    requireBuild();
    stack = await PrivateHaStack.start();
    await query(stack.databaseUrl, 'CREATE TABLE ha_probe (id integer PRIMARY KEY)');
  }, haStartBudgetMs + 10_000);

  afterAll(async () => {
    await stopAllAmends();
    await chain?.close();
    await deleteTestTopics(topics);
    await stack?.stop();
  }, 120_000);

  it('serves the primary on the usual URL and a replica on the next port, with a synchronous standby', async () => {
    const s = await started().status();
    expect(s.nodes.map((n) => n.role).sort()).toEqual(['primary', 'sync-standby']);
    const primary = s.nodes.find((n) => n.role === 'primary') as { name: string; address: string };
    const standby = s.nodes.find((n) => n.role === 'sync-standby') as { name: string; address: string };
    expect([s.primaryRoute, s.replicaRoute]).toEqual([primary.name, standby.name]);

    const viaPrimary = await query<{ port: number; recovery: boolean }>(
      started().databaseUrl,
      'SELECT inet_server_port() AS port, pg_is_in_recovery() AS recovery',
    );
    expect(viaPrimary).toEqual([{ port: portOf(primary.address), recovery: false }]);
    const viaReplica = await query<{ port: number; recovery: boolean }>(
      started().replicaUrl,
      'SELECT inet_server_port() AS port, pg_is_in_recovery() AS recovery',
    );
    expect(viaReplica).toEqual([{ port: portOf(standby.address), recovery: true }]);
    // A commit is acknowledged only once the standby has it.
    const replication = await query<{ application_name: string; sync_state: string }>(
      started().superuserUrl,
      'SELECT application_name, sync_state FROM pg_stat_replication',
    );
    expect(replication).toEqual([{ application_name: standby.name, sync_state: 'sync' }]);
    // TLS passes through HAProxy, with the stack's certificate checked.
    const tls = await query<{ ssl: boolean }>(
      {
        connectionString: started().databaseUrl.replace('?sslmode=disable', ''),
        ssl: { ca: readFileSync(started().caFile, 'utf8') },
      },
      'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()',
    );
    expect(tls).toEqual([{ ssl: true }]);
  });

  it('switches over to the synchronous standby with writes paused under 5 s, losing no acknowledged row', async () => {
    const before = await primaryPort();
    const { writer } = await writingDuring(1, async () => {
      await started().switchover();
    });
    const pauseMs = longestPauseMs(writer.acks);
    console.log(
      `ha-stack: switchover -> longest pause between acknowledged writes ${pauseMs} ms (load ${loadAverage()})`,
    );
    expect(pauseMs).toBeLessThanOrEqual(switchoverBoundMs);
    expect(await primaryPort()).not.toBe(before);
    await expectAllAcknowledged(writer);
    // The old primary comes back as the new one's synchronous standby: a failover needs one.
    await waitForSyncStandby();
  }, 90_000);

  it('reaches the promoted node on the same URL after a SIGKILL of the primary, losing no acknowledged row', async () => {
    const before = await primaryPort();
    const { writer, faultAt } = await writingDuring(1_000_000, async () => {
      const killed = await started().killPrimary();
      const node = (await started().status()).nodes.find((n) => n.name === killed.node);
      expect(portOf(node?.address ?? ':0')).toBe(before);
    });
    const first = writer.acks.find((a) => a.at >= faultAt && a.port !== before);
    const unavailableMs = (first?.at ?? Number.POSITIVE_INFINITY) - faultAt;
    console.log(
      `ha-stack: primary SIGKILL -> first write on the promoted node ${unavailableMs} ms (load ${loadAverage()})`,
    );
    expect(unavailableMs).toBeLessThanOrEqual(killBoundMs);
    expect(writer.acks.filter((a) => a.port === before).length).toBeGreaterThan(0);
    await expectAllAcknowledged(writer);
  }, 60_000);

  it('heals an asynchronous failover that lost acknowledged commits: decided again, published again, verify PASS', async () => {
    const url = started().databaseUrl;
    // The old primary of the kill above rejoins first: until then HAProxy can still lead a
    // new connection to it while it starts up, which a one-shot command (output-create,
    // source-load) does not ride.
    await replicateAsynchronously(started());
    const c = await RollbackChain.start(topics, url);
    chain = c;
    await c.load(100);
    await c.waitDrained();
    const sender = await stallReplication(started());
    // A second worker joins: the rebalance's claims are among the commits the standby lacks.
    const second = c.startProcess('worker');
    await c.load(100);
    await second.waitForLog('store_observed', 30_000);
    await c.waitDrained();
    const lost = { decisions: await c.decisions(), epochs: await c.epochs() };
    const replica = started().replicaUrl;
    const standby = { decisions: await c.decisions(replica), epochs: await c.epochs(replica) };
    expect(standby.decisions).toBeLessThan(lost.decisions);
    expect(standby.epochs.every((e, i) => e < (lost.epochs[i] ?? 0))).toBe(true);
    const before = await primaryOf(started());
    const positions = await c.positions();

    const faultAt = Date.now();
    const crashed = await crashPrimary(started(), [sender]);
    // The standby is promoted with what it held: the decisions, versions, claims, relay
    // cursors and view rows of the second load are gone, while the output topic and the view
    // saw them. Nothing new arrives: the lost records must be decided again all the same.
    expect((await primaryAnswering(url)).port).not.toBe(before.port);
    stopNode(started(), crashed);
    await c.waitDrained();
    c.expectWentBack(positions, faultAt);
    console.log(
      `ha-stack: asynchronous failover healed ${Date.now() - faultAt} ms after the fault (load ${loadAverage()})`,
    );
    c.expectAlive();
    await expectRepublished(c);
    await c.expectVerified();
  }, 180_000);

  it('heals a base backup restored under load: the lost commits decided again, verify PASS', async () => {
    const url = started().databaseUrl;
    chain ??= await RollbackChain.start(topics, url);
    const c = chain;
    const primary = await primaryOf(started());
    const decidedBefore = await c.decisions();
    const loading = c.load(200);
    // Taken while the workers decide that load: what they decide after it is lost.
    await until(
      'a load partly decided',
      () => c.decisions(),
      (n) => n > decidedBefore + 60,
    );
    const backup = await baseBackup(started(), primary);
    await loading;
    // Certain to be lost: decided, published and viewed after the backup ended.
    await c.load(100);
    await c.waitDrained();
    const positions = await c.positions();

    const faultAt = Date.now();
    await restoreBackup(started(), primary, backup);
    await primaryAnswering(url);
    await c.waitDrained();
    c.expectWentBack(positions, faultAt);
    console.log(
      `ha-stack: restored base backup healed ${Date.now() - faultAt} ms after the fault (load ${loadAverage()})`,
    );
    c.expectAlive();
    await c.expectVerified();
  }, 180_000);
});

/** The relay published versions again, and the view took the copies as identical duplicates. */
async function expectRepublished(c: RollbackChain): Promise<void> {
  const { total } = await c.probe.outbox(c.source.namespace);
  const ends = await endOffsets(c.source.outputTopic, 2);
  expect(ends.reduce((a, b) => a + b, 0)).toBeGreaterThan(total);
  const view = await c.probe.viewPartitions(c.source.namespace);
  expect(view.reduce((n, p) => n + p.duplicate, 0)).toBeGreaterThan(0);
}
