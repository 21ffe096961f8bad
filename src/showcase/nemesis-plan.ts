/**
 * The chaos run's fault schedule (issue 17): drawn from the seed alone, so `--seed N` replays
 * the same faults at the same offsets on any machine. Pure: no clock, no I/O; the executor
 * (nemesis.ts) injects and heals what this plans, and records when it really did.
 *
 * Every fault is held for a while, then healed; the next one comes after a short gap. The
 * first four are a seeded order of one broker, two database and one process fault, so even
 * a 60 s run mixes at least four kinds with the broker and the database among them; the rest
 * are drawn by weight. Holds stay within the outage budget: the database away longer than
 * one operation's 20 s budget (docs/design.md#unknown-outcomes), yet shorter than the outage budget, is the
 * longest, and comes only after six shorter faults. A broker fault is never planned while the last one's broker may still be
 * restarting (`brokerSpacingMs`).
 */
import { mulberry32 } from '../domain/seeded-random.js';

export const faultKinds = [
  'process-kill',
  'process-pause',
  'broker-kill',
  'db-restart',
  'db-away',
  'db-cut',
  'commit-reply-drop',
] as const;
export type FaultKind = (typeof faultKinds)[number];

/** The processes the supervisor owns (chaos-run.ts); worker-a reaches PostgreSQL through the fault proxy. */
export const chaosProcesses = ['worker-a', 'worker-b', 'relay', 'view'] as const;
export type ChaosProcess = (typeof chaosProcesses)[number];

export interface PlannedFault {
  /** 1, 2, …: the order of injection. */
  n: number;
  kind: FaultKind;
  /** A process, `partition P` (its source leader's broker), `postgres`, or worker-a's connections. */
  target: string;
  /** When it is injected, from the start of the load. */
  at_ms: number;
  /** How long it lasts before it is healed (0: healed by what follows it, e.g. a restart). */
  hold_ms: number;
}

export interface NemesisLimits {
  durationMs: number;
  /** The processes' --outage-budget-s, in ms: a fault's hold stays below it. */
  outageBudgetMs: number;
  /** One store operation's budget (docs/design.md#unknown-outcomes): the database stays away longer than this. */
  operationBudgetMs: number;
  partitions: number;
}

/** The first fault comes after the load has started. */
const firstFaultMs = 3_000;
/** Between a fault's heal and the next fault. */
const gapMs: [number, number] = [1_500, 4_000];
/** A killed broker is held down this long, then restarted (which takes a JVM start). */
const brokerDownMs: [number, number] = [2_000, 5_000];
const brokerSpacingMs = 30_000;
/** The database away: at least this much past one operation's budget, this much below the outage budget. */
const awayMarginMs: [number, number] = [1_000, 6_000];
const weights: Record<FaultKind, number> = {
  'process-kill': 3,
  'process-pause': 2,
  'broker-kill': 2,
  'db-restart': 2,
  'db-away': 1,
  'db-cut': 2,
  'commit-reply-drop': 2,
};
const opening: FaultKind[] = ['broker-kill', 'db-restart', 'db-cut', 'process-kill'];
const shortFaultsFirst = 6;

export function planFaults(seed: number, limits: NemesisLimits): PlannedFault[] {
  const random = mulberry32(seed);
  const between = ([lo, hi]: [number, number]) => lo + Math.floor(random() * (hi - lo + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const order = shuffled(opening, random);
  // Away past one operation's budget fits within the outage budget only when that is longer.
  const awayFits = limits.operationBudgetMs + awayMarginMs[0] + awayMarginMs[1] <= limits.outageBudgetMs;
  const plan: PlannedFault[] = [];
  let at = firstFaultMs;
  let lastBroker = -Infinity;
  while (at < limits.durationMs) {
    const drawn = order.shift() ?? drawKind(random);
    // The long absence comes only after six short faults, so even a short run mixes enough.
    const kind = drawn === 'db-away' && (!awayFits || plan.length < shortFaultsFirst) ? 'db-cut' : drawn;
    if (kind === 'broker-kill' && at - lastBroker < brokerSpacingMs) {
      at += 500;
      continue;
    }
    const hold = holdOf(kind, limits, between);
    if (at + hold > limits.durationMs) break;
    if (kind === 'broker-kill') lastBroker = at;
    plan.push({ n: plan.length + 1, kind, target: targetOf(kind, limits, pick), at_ms: at, hold_ms: hold });
    at += hold + between(gapMs);
  }
  return plan;
}

/** Fisher–Yates: the same seed, the same order, whatever the engine's sort does. */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

function drawKind(random: () => number): FaultKind {
  const total = faultKinds.reduce((sum, k) => sum + weights[k], 0);
  let roll = random() * total;
  for (const kind of faultKinds) {
    roll -= weights[kind];
    if (roll < 0) return kind;
  }
  return 'process-kill';
}

function holdOf(kind: FaultKind, limits: NemesisLimits, between: (range: [number, number]) => number): number {
  switch (kind) {
    case 'process-kill':
    case 'db-restart':
    case 'commit-reply-drop':
      return 0;
    case 'process-pause':
      return between([1_000, 6_000]);
    case 'broker-kill':
      return between(brokerDownMs);
    case 'db-cut':
      return between([1_000, 8_000]);
    case 'db-away':
      // Past one operation's budget, and short enough to leave the reconnect its margin.
      return between([limits.operationBudgetMs + awayMarginMs[0], limits.outageBudgetMs - awayMarginMs[1]]);
  }
}

function targetOf(kind: FaultKind, limits: NemesisLimits, pick: <T>(items: readonly T[]) => T): string {
  switch (kind) {
    case 'process-kill':
    case 'process-pause':
      return pick(chaosProcesses);
    case 'broker-kill':
      return `partition ${pick(Array.from({ length: limits.partitions }, (_, i) => i))}`;
    case 'db-restart':
    case 'db-away':
      return 'postgres';
    case 'db-cut':
    case 'commit-reply-drop':
      return 'worker-a';
  }
}
