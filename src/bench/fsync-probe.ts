/**
 * How many durable flushes this disk does per second: PostgreSQL's own `pg_test_fsync`,
 * briefly, on the file system of the local stack's data. One durable commit costs one WAL
 * flush, so fdatasync ops/s bounds a single commit stream at batch size 1.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export interface FsyncProbe {
  tool: string;
  seconds_per_test: number;
  /** "Compare file sync methods using one 8kB write": fdatasync. */
  fdatasync_ops_per_s: number | null;
  /** The same with two 8kB writes. */
  fdatasync_two_writes_ops_per_s: number | null;
  test_file_dir: string;
}

const candidates = ['/usr/lib/postgresql/15/bin/pg_test_fsync', 'pg_test_fsync'];

export function probeFsync(dir: string, secondsPerTest: number): FsyncProbe {
  const tool = candidates.find((c) => !c.startsWith('/') || existsSync(c)) ?? 'pg_test_fsync';
  const file = join(dir, `pg_test_fsync.${process.pid}.tmp`);
  const r = spawnSync(tool, ['-s', String(secondsPerTest), '-f', file], { encoding: 'utf8', timeout: 120_000 });
  rmSync(file, { force: true });
  const text = r.stdout ?? '';
  const [one, two] = text.split('using two 8kB writes');
  return {
    tool,
    seconds_per_test: secondsPerTest,
    fdatasync_ops_per_s: fdatasyncOf(one),
    fdatasync_two_writes_ops_per_s: fdatasyncOf(two),
    test_file_dir: dir,
  };
}

function fdatasyncOf(section: string | undefined): number | null {
  const m = /^\s*fdatasync\s+([\d.]+) ops\/sec/m.exec(section ?? '');
  return m?.[1] === undefined ? null : Number(m[1]);
}
