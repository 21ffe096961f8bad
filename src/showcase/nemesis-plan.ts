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
 *
 * Against the HA database (`--database ha`, issue 33) the single node's crash and absence give
 * way to the failovers: the primary's postmaster SIGKILLed, a planned switchover, and the
 * primary cut off from etcd and from its clients for longer than Patroni's leader key lives.
 * Its opening holds all three between a broker, a connection and a process fault, so every
 * 60 s run has each of them. A failover needs a synchronous standby to fail over to, and the
 * old primary takes seconds to rejoin as one (pg_rewind, a restart): failovers come
 * `failoverSpacingMs` apart, and the opening waits for a failover's turn.
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
  'primary-kill',
  'switchover',
  'primary-isolated',
] as const;
export type FaultKind = (typeof faultKinds)[number];

/** The database a chaos run starts: one PostgreSQL, or Patroni's two nodes behind HAProxy. */
export const chaosDatabases = ['single', 'ha'] as const;
export type ChaosDatabase = (typeof chaosDatabases)[number];

/** The faults that move the HA database's primary to the other node. */
export const failoverKinds: readonly FaultKind[] = ['primary-kill', 'switchover', 'primary-isolated'];

/**
 * The kinds each database draws from, in the order weights are summed (the single database's
 * is the order of issue 17, so its seeds plan what they always planned).
 */
export const databaseKinds: Record<ChaosDatabase, readonly FaultKind[]> = {
  single: faultKinds.filter((k) => !failoverKinds.includes(k)),
  ha: faultKinds.filter((k) => k !== 'db-restart' && k !== 'db-away'),
};

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
  database: ChaosDatabase;
}

/** The first fault comes after the load has started. */
const firstFaultMs = 3_000;
/** Between a fault's heal and the next fault. */
const gapMs: [number, number] = [1_500, 4_000];
/** A killed broker is held down this long, then restarted (which takes a JVM start). */
const brokerDownMs: [number, number] = [2_000, 5_000];
const brokerSpacingMs = 30_000;
/**
 * From a failover's end to the next failover: the old primary rejoins as the synchronous
 * standby within about 10 s on an idle 2-core machine (after a cut: rewound, restarted).
 */
const failoverSpacingMs = 15_000;
/**
 * The primary cut off for longer than its leader key lives (Patroni's ttl 10 s) plus a loop
 * and the standby's promotion: the failover happens while it is cut off.
 */
const isolationMs: [number, number] = [14_000, 18_000];
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
  'primary-kill': 2,
  switchover: 2,
  'primary-isolated': 1,
};
const singleOpening: FaultKind[] = ['broker-kill', 'db-restart', 'db-cut', 'process-kill'];
const shortFaultsFirst = 6;

export function planFaults(seed: number, limits: NemesisLimits): PlannedFault[] {
  const random = mulberry32(seed);
  const between = ([lo, hi]: [number, number]) => lo + Math.floor(random() * (hi - lo + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const order = limits.database === 'ha' ? haOpening(random) : shuffled(singleOpening, random);
  // Away past one operation's budget fits within the outage budget only when that is longer.
  const awayFits = limits.operationBudgetMs + awayMarginMs[0] + awayMarginMs[1] <= limits.outageBudgetMs;
  const plan: PlannedFault[] = [];
  let at = firstFaultMs;
  let lastBroker = -Infinity;
  let failoverFree = 0;
  const turnOf = (kind: FaultKind) =>
    kind === 'broker-kill' ? lastBroker + brokerSpacingMs : failoverKinds.includes(kind) ? failoverFree : 0;
  const allowed = (kind: FaultKind) => at >= turnOf(kind);
  while (at < limits.durationMs) {
    // The opening in its order, then the weighted draw. While the opening's next kind waits for
    // its turn, drawn faults that end before it fill the wait.
    const waitsFor = order.length > 0 && !allowed(order[0] as FaultKind) ? turnOf(order[0] as FaultKind) : null;
    const drawn = (waitsFor === null ? order.shift() : undefined) ?? drawKind(random, limits.database);
    // The long absence comes only after six short faults, so even a short run mixes enough.
    const kind = drawn === 'db-away' && (!awayFits || plan.length < shortFaultsFirst) ? 'db-cut' : drawn;
    if (!allowed(kind) || (waitsFor !== null && failoverKinds.includes(kind))) {
      at += 500;
      continue;
    }
    const hold = holdOf(kind, limits, between);
    if (waitsFor !== null && at + hold > waitsFor) {
      at += 500;
      continue;
    }
    if (at + hold > limits.durationMs) break;
    if (kind === 'broker-kill') lastBroker = at;
    if (failoverKinds.includes(kind)) failoverFree = at + hold + failoverSpacingMs;
    plan.push({ n: plan.length + 1, kind, target: targetOf(kind, limits, pick), at_ms: at, hold_ms: hold });
    at += hold + between(gapMs);
  }
  return plan;
}

/**
 * A failover, another fault, a failover, … : the three failovers as early as their spacing
 * allows, the cut-off primary (the longest) never first, so all three fit in 60 s; a broker
 * kill first among the others.
 */
function haOpening(random: () => number): FaultKind[] {
  const [first, second] = shuffled(['primary-kill', 'switchover'] as FaultKind[], random) as [FaultKind, FaultKind];
  const failovers = [first, ...shuffled([second, 'primary-isolated'] as FaultKind[], random)];
  const others: FaultKind[] = ['broker-kill', ...shuffled(['db-cut', 'process-kill'] as FaultKind[], random)];
  return failovers.flatMap((f, i) => [f, others[i] as FaultKind]);
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

function drawKind(random: () => number, database: ChaosDatabase): FaultKind {
  const kinds = databaseKinds[database];
  const total = kinds.reduce((sum, k) => sum + weights[k], 0);
  let roll = random() * total;
  for (const kind of kinds) {
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
    case 'primary-kill':
    case 'switchover':
      return 0;
    case 'primary-isolated':
      return between(isolationMs);
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
    case 'primary-kill':
    case 'switchover':
    case 'primary-isolated':
      return 'the primary';
  }
}
