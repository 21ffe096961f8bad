/**
 * `verify --json`'s `stats.peak_rss_mb` is the verifier's own peak, not its parent's: Linux
 * carries getrusage's maxRSS over fork and exec, so a verify spawned by a large process (the
 * bench harness) reported the harness's memory as its own (issue 14: 633 MB for a 312 MB run).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { repoRoot, requireBuild } from '../support/amendsctl-process.js';

describe('the verifier peak memory figure', () => {
  it('does not inherit the spawning process high-water mark', () => {
    requireBuild();
    const held = Buffer.alloc(600 * 1024 * 1024, 1); // this process's RSS: 600 MB more
    const stats = pathToFileURL(join(repoRoot, 'dist', 'verify', 'verify-stats.js')).href;
    const script = `const { PhaseClock } = await import(${JSON.stringify(stats)});
      const s = new PhaseClock().stats(0);
      console.log(JSON.stringify({ peak: s.peak_rss_mb, maxRss: process.resourceUsage().maxRSS / 1024 }));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const { peak, maxRss } = JSON.parse(r.stdout) as { peak: number; maxRss: number };
    // The inherited figure is what the old stats reported; the child's own peak is a bare Node's.
    expect(maxRss).toBeGreaterThan(600);
    expect(peak).toBeLessThan(200);
    expect(peak).toBeGreaterThan(10);
    expect(held[0]).toBe(1);
  });
});
