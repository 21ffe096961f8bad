/**
 * The decision rate over each tenth of a backlog, from the workers' acknowledged commits
 * (`process_attempt` lines: partition, epoch, records, time). Pure: the scale run reads the
 * logs and hands the commits here.
 *
 * The commits of all workers are put in time order and counted cumulatively. Workers that
 * start together cause a join rebalance (the first one to join owns every partition for a
 * moment), so the count starts at the group's settle: the first commit of the last epoch of
 * the partition that settled last. Its records and those before it are warm-up; the rest
 * are split into ten tenths. A tenth's rate is the records of the commits that end inside
 * it over the time from the commit before it (which opens the window, its records not
 * counted) to the commit that completes it: commit granularity, no interpolation. If the
 * group settled only after half the backlog (a tiny backlog), the count starts at the first
 * commit instead.
 */

export interface CommitPoint {
  partition: number;
  epoch: number;
  records: number;
  atMs: number;
}

export interface TenthWindow {
  /** null when the window has no time span (commits in the same millisecond, or none). */
  rps: number | null;
  records: number;
  seconds: number;
  /** Cumulative records decided when the window opened and when it closed. */
  from_record: number;
  to_record: number;
}

export interface TenthRates {
  commits: number;
  records: number;
  /** Records decided up to and including the settle commit: not in any tenth. */
  warmup_records: number;
  tenths: TenthWindow[];
}

const tenthCount = 10;

export function tenthRates(unordered: readonly CommitPoint[]): TenthRates {
  const commits = [...unordered].sort((a, b) => a.atMs - b.atMs);
  const cum: number[] = [];
  let total = 0;
  for (const c of commits) {
    total += c.records;
    cum.push(total);
  }
  if (commits.length < 2) {
    const none = { rps: null, records: 0, seconds: 0, from_record: 0, to_record: total };
    return { commits: commits.length, records: total, warmup_records: total, tenths: Array(tenthCount).fill(none) };
  }
  let settle = settleIndex(commits);
  if ((cum[settle] as number) > total / 2) settle = 0;
  const start = cum[settle] as number;
  const counted = total - start;
  const tenths: TenthWindow[] = [];
  for (let k = 0; k < tenthCount; k++) {
    tenths.push(
      window(commits, cum, settle, start + (k * counted) / tenthCount, start + ((k + 1) * counted) / tenthCount),
    );
  }
  return { commits: commits.length, records: total, warmup_records: start, tenths };
}

/** Index of the latest "first commit under the partition's last epoch" among the partitions. */
function settleIndex(commits: readonly CommitPoint[]): number {
  const lastEpoch = new Map<number, number>();
  for (const c of commits) lastEpoch.set(c.partition, Math.max(lastEpoch.get(c.partition) ?? 0, c.epoch));
  const firstUnderLast = new Map<number, number>();
  commits.forEach((c, i) => {
    if (c.epoch === lastEpoch.get(c.partition) && !firstUnderLast.has(c.partition)) firstUnderLast.set(c.partition, i);
  });
  return Math.max(...firstUnderLast.values());
}

/** The commits that take the cumulative count from `lo` to `hi`, opened by the commit before. */
function window(
  commits: readonly CommitPoint[],
  cum: readonly number[],
  first: number,
  lo: number,
  hi: number,
): TenthWindow {
  const last = commits.length - 1;
  let open = first;
  while (open < last && (cum[open + 1] as number) <= lo) open++;
  let close = open + 1;
  while (close < last && (cum[close] as number) < hi) close++;
  const at = (i: number) => (commits[i] as CommitPoint).atMs;
  // Commits in the same millisecond give no span: widen the window by whole commits.
  while (at(close) === at(open) && close < last) close++;
  while (at(close) === at(open) && open > first) open--;
  const seconds = (at(close) - at(open)) / 1000;
  const records = (cum[close] as number) - (cum[open] as number);
  return {
    rps: seconds > 0 && open < close ? records / seconds : null,
    records,
    seconds,
    from_record: cum[open] as number,
    to_record: cum[close] as number,
  };
}
