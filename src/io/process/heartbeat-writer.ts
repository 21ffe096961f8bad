/**
 * Every long-running process writes one heartbeat row about once a second: who it is and
 * a summary of its actors' states (docs/design.md#inspection). Other processes (inspect, the
 * dashboard) read these rows; a missed beat is only staleness, never a failure of the work.
 *
 * Each beat also reads when the server that wrote it started (`pg_postmaster_start_time()`).
 * Another start time is another server, or the same one restarted: a failover, a restart or a
 * restored backup, after which the database may have gone back in time (docs/design.md#store). The
 * writer says so once per change (`database_changed`) and tells `onServerChanged`; the worker
 * then claims its partitions afresh (a partition with nothing to decide would otherwise never
 * meet its lower frontier). Within a second of the new server answering, whatever the
 * connection path: a pooler that hides the broken session hides nothing from this.
 */
import type pg from 'pg';
import { errorMessage } from '../../kernel/error-message.js';
import type { JsonLog } from './json-log.js';

export const heartbeatIntervalMs = 1_000;

/** The long-running processes that beat. */
export type ProcessRole = 'worker' | 'relay' | 'view';

export interface HeartbeatIdentity {
  namespace: string;
  workerId: string;
  role: ProcessRole;
  pid: number;
}

const upsertSql = `
  INSERT INTO worker_heartbeats AS h (namespace, worker_id, role, pid, state)
  VALUES ($1, $2, $3, $4, $5::jsonb)
  ON CONFLICT (namespace, worker_id)
  DO UPDATE SET role = EXCLUDED.role, pid = EXCLUDED.pid, state = EXCLUDED.state, heartbeat_at = now(),
    started_at = CASE WHEN h.pid = EXCLUDED.pid THEN h.started_at ELSE now() END
  RETURNING pg_postmaster_start_time()::text AS server_started`;

export class HeartbeatWriter {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> = Promise.resolve();
  private warned = false;
  /** When the server of the last written beat started (undefined before the first). */
  private server: string | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly identity: HeartbeatIdentity,
    private readonly summarize: () => object,
    private readonly log: JsonLog,
    private readonly onServerChanged: (detail: string) => void = () => {},
  ) {}

  start(): void {
    this.beat();
    this.timer = setInterval(() => this.beat(), heartbeatIntervalMs);
    this.timer.unref();
  }

  /**
   * Writes a last beat (the final state, marked `stopped`: a process starting under the same
   * id need not wait for the row to go stale, live-twin.ts) and stops.
   */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.inFlight;
    this.beat(true);
    await this.inFlight;
  }

  private beat(last = false): void {
    // One beat at a time: a slow database must not pile up connections.
    this.inFlight = this.inFlight.then(async () => {
      const { namespace, workerId, role, pid } = this.identity;
      try {
        const state = last ? { ...this.summarize(), stopped: true } : this.summarize();
        const written = await this.pool.query<{ server_started: string }>(upsertSql, [
          namespace,
          workerId,
          role,
          pid,
          JSON.stringify(state),
        ]);
        this.warned = false;
        this.noteServer(written.rows[0]?.server_started);
      } catch (error) {
        if (!this.warned) {
          this.log.write('heartbeat_failed', { detail: errorMessage(error) });
          this.warned = true;
        }
      }
    });
  }

  private noteServer(started: string | undefined): void {
    if (started === undefined || started === this.server) return;
    const before = this.server;
    this.server = started;
    if (before === undefined) return;
    const detail = `another PostgreSQL server answers (started ${started}; the one before started ${before}): a failover, a restart or a restored backup, which may have taken the database back in time`;
    this.log.write('database_changed', { detail }, 'warn');
    this.onServerChanged(detail);
  }
}
