/**
 * A Prometheus counter that follows a running total kept elsewhere (the relay's stats, the
 * view's per-partition counts): each scrape adds what the total grew by since the last one.
 */
import { Counter, type Registry } from 'prom-client';

export interface CounterFromTotalsOptions<L extends string> {
  registry: Registry;
  name: string;
  help: string;
  labelNames: readonly L[];
  /** The current totals, one per label set. */
  totals: () => readonly { labels: Record<L, string>; total: number }[];
}

export function counterFromTotals<L extends string>(options: CounterFromTotalsOptions<L>): Counter<L> {
  const seen = new Map<string, number>();
  return new Counter<L>({
    name: options.name,
    help: options.help,
    labelNames: options.labelNames,
    registers: [options.registry],
    async collect() {
      for (const { labels, total } of options.totals()) {
        const key = JSON.stringify(labels);
        const before = seen.get(key) ?? 0;
        // inc(0) still makes the series appear before anything happened.
        this.inc(labels as never, Math.max(0, total - before));
        seen.set(key, Math.max(total, before));
      }
    },
  });
}
