/**
 * What `verify --json` adds as `stats` (issue 14): how long each phase took, the source's
 * records per second over the whole run and the process's peak resident memory.
 */
import { readFileSync } from 'node:fs';

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
      peak_rss_mb: Math.round(peakRssKib() / 102.4) / 10,
    };
  }
}

/**
 * The process's own peak resident memory in KiB: Linux's VmHWM. Not getrusage's maxRSS, which
 * Linux carries over fork and exec: a verify spawned by a process of 600 MB reported 633 MB
 * while its VmHWM was 312 MB (the bench harness's scale run). Elsewhere, maxRSS.
 */
function peakRssKib(): number {
  try {
    const kib = Number(/^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
    if (Number.isFinite(kib)) return kib;
  } catch {
    // no /proc: not Linux
  }
  return process.resourceUsage().maxRSS;
}
