/**
 * What `verify --json` adds as `stats` (issue 14): how long each phase took, the source's
 * records per second over the whole run and the process's peak resident memory.
 */

export const verifyPhases = ['source', 'store', 'topic', 'view'] as const;
export type VerifyPhase = (typeof verifyPhases)[number];

export interface VerifyStats {
  phases_ms: Record<VerifyPhase, number>;
  total_ms: number;
  records_per_s: number;
  peak_rss_mb: number;
}

export class PhaseClock {
  private readonly started = performance.now();
  private readonly spent: Record<VerifyPhase, number> = { source: 0, store: 0, topic: 0, view: 0 };

  async time<T>(phase: VerifyPhase, run: () => Promise<T>): Promise<T> {
    const from = performance.now();
    try {
      return await run();
    } finally {
      this.spent[phase] += performance.now() - from;
    }
  }

  stats(records: number): VerifyStats {
    const total = performance.now() - this.started;
    const round = (ms: number) => Math.round(ms);
    return {
      phases_ms: {
        source: round(this.spent.source),
        store: round(this.spent.store),
        topic: round(this.spent.topic),
        view: round(this.spent.view),
      },
      total_ms: round(total),
      records_per_s: total > 0 ? Math.round((records * 1000) / total) : 0,
      // resourceUsage().maxRSS is in kibibytes.
      peak_rss_mb: Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10,
    };
  }
}
