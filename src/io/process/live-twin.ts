/**
 * A worker started with an `--instance-id` that a live worker of the namespace already uses
 * would join the consumer group as the same static member (group.instance.id): the broker
 * fences the *old* member, the healthy one (KIP-345). So before joining, a worker looks at the
 * heartbeat row of its id (heartbeat-writer.ts) and refuses to start while another process
 * still beats it (issue 35).
 *
 * A fresh row does not prove a live process: a supervisor restarts a killed worker within a
 * second. So a fresh row is watched until it either moves (another process beat: refuse) or
 * goes stale (nobody beats it: go on). A row whose last beat says `stopped` is free at once.
 * This is a check, not a lock: two workers started within the same second both pass, and the
 * group's fence (worker-composition.ts) remains the backstop.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { operationalError } from '../../kernel/amends-error.js';
import { heartbeatIntervalMs } from './heartbeat-writer.js';

/** A row not beaten for this long has no live process behind it (three missed beats). */
export const heartbeatStaleMs = 3 * heartbeatIntervalMs;
const watchPollMs = 250;

interface BeatRow {
  pid: number;
  beat_ms: number;
  age_ms: number;
  stopped: boolean;
}

const beatSql = `
  SELECT pid, (extract(epoch FROM heartbeat_at) * 1000)::float8 AS beat_ms,
         (extract(epoch FROM now() - heartbeat_at) * 1000)::float8 AS age_ms,
         coalesce(state->>'stopped', '') = 'true' AS stopped
    FROM worker_heartbeats WHERE namespace = $1 AND worker_id = $2`;

async function readBeat(pool: pg.Pool, namespace: string, id: string): Promise<BeatRow | undefined> {
  return (await pool.query<BeatRow>(beatSql, [namespace, id])).rows[0];
}

/**
 * Resolves when no other process beats the row (namespace, id); throws one line naming the id
 * when one does. Waits at most `heartbeatStaleMs` (only after a restart within that time).
 */
export async function refuseLiveTwin(pool: pg.Pool, namespace: string, id: string, signal: AbortSignal): Promise<void> {
  const first = await readBeat(pool, namespace, id);
  if (first === undefined || first.stopped || first.age_ms >= heartbeatStaleMs) return;
  const deadline = Date.now() + (heartbeatStaleMs - first.age_ms);
  while (Date.now() < deadline) {
    await sleep(watchPollMs, undefined, { signal });
    const now = await readBeat(pool, namespace, id);
    if (now === undefined || now.stopped) return;
    if (now.beat_ms !== first.beat_ms) {
      throw operationalError(
        `another process (pid ${now.pid}) is running with --instance-id ${id} in namespace ${namespace}: it beat its heartbeat ${Math.round(now.age_ms)} ms ago; joining would fence it out of the consumer group: give each worker its own --instance-id, or stop that one first`,
      );
    }
  }
}
