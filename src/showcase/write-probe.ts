/**
 * How long the chaos run's database could not take a write (issue 33): a probe commits a
 * one-row update through the run's database URL (HAProxy's primary port on the HA database)
 * every 100 ms on one session, opened again at once when it breaks, each attempt bounded by
 * a second. Every commit answers with the port of the node that made it, and while a
 * measurement waits for amends' own first commit (write-measures.ts) the probe also reads the
 * namespace's decided frontier with the worker's own observe statement.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { sessionConfig } from '../io/store/postgres.js';
import { observeSql } from '../io/store/sql/partition-row.js';
import { type MeasureFrom, type WriteMeasure, WriteMeasures } from './write-measures.js';

export type { WriteMeasure } from './write-measures.js';

const probeEveryMs = 100;
const attemptMs = 1_000;
const schema = 'amends_chaos_probe';

export class WriteProbe {
  private readonly measures = new WriteMeasures();
  private client: pg.Client | undefined;
  private running = true;
  private readonly loop: Promise<void>;
  private tracked: { namespace: string; partitions: number } | undefined;

  private constructor(private readonly url: string) {
    this.loop = this.run();
  }

  /** Creates the probe's schema and row (its own schema: amends' tables stay as they are) and starts probing. */
  static async start(url: string): Promise<WriteProbe> {
    const client = new pg.Client(sessionConfig(url, 'amends chaos write probe'));
    await client.connect();
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${schema}.beat (id int PRIMARY KEY, n bigint NOT NULL)`);
      await client.query(`INSERT INTO ${schema}.beat VALUES (1, 0) ON CONFLICT DO NOTHING`);
    } finally {
      await client.end();
    }
    return new WriteProbe(url);
  }

  /** The namespace whose decided frontier shows amends' own first commit after a fault. */
  track(namespace: string, partitions: number): void {
    this.tracked = { namespace, partitions };
  }

  /** Opens a measurement; its result fills in as the probe sees commits (null where it never did). */
  measure(from: MeasureFrom): WriteMeasure {
    return this.measures.open(from);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await this.client?.end().catch(() => {});
  }

  private async run(): Promise<void> {
    while (this.running) {
      const began = Date.now();
      try {
        await this.tick();
      } catch {
        const broken = this.client;
        this.client = undefined;
        await broken?.end().catch(() => {});
      }
      await sleep(Math.max(0, probeEveryMs - (Date.now() - began)));
    }
  }

  private async tick(): Promise<void> {
    if (this.client === undefined) {
      const client = new pg.Client({
        ...sessionConfig(this.url, 'amends chaos write probe'),
        connectionTimeoutMillis: attemptMs,
        query_timeout: attemptMs,
      });
      client.on('error', () => {});
      this.client = client;
      await client.connect();
    }
    const { rows } = await this.client.query<{ port: number }>(
      `UPDATE ${schema}.beat SET n = n + 1 WHERE id = 1 RETURNING inet_server_port() AS port`,
    );
    this.measures.committed(Date.now(), Number(rows[0]?.port));
    if (!this.measures.awaitingAmends() || this.tracked === undefined) return;
    const frontier = await this.decidedFrontier(this.client, this.tracked);
    this.measures.frontierRead(Date.now(), frontier);
  }

  /** The sum of the namespace's partition frontiers, read with the worker's own observe statement. */
  private async decidedFrontier(client: pg.Client, t: { namespace: string; partitions: number }): Promise<number> {
    let sum = 0;
    for (let partition = 0; partition < t.partitions; partition++) {
      const { rows } = await client.query<{ frontier: string }>(observeSql, [t.namespace, partition]);
      sum += Number(rows[0]?.frontier ?? 0);
    }
    return sum;
  }
}
