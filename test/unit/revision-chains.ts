/**
 * Random configuration revisions for revisions-vs-oracle.property.test.ts, made the way
 * `config-revise` makes them (src/io/store/revise-config.ts): between two records of a history
 * the engine is deciding, at each partition's frontier (or further into the gap before the
 * partition's next record, as a frontier past skipped offsets is), a whole configuration drawn
 * at random goes through revisedConfig, then pinDecided with the keys the engine has decided
 * (those changedTerms names, or all of them when the default rule changes), then refuseNoEffect,
 * in config-revise's order. A draw refused for changing a decided key, or one that changes no
 * key's terms once pinned, is skipped, as the command refuses it.
 */
import fc from 'fast-check';
import { type ConfigFile, type NamespaceConfig, stockKeyId } from '../../src/domain/config.js';
import {
  baseChain,
  configAt,
  latestConfig,
  nextRevision,
  partitionerOf,
  type RevisionChain,
} from '../../src/domain/config-revision.js';
import { decide } from '../../src/domain/decide.js';
import type { Decision } from '../../src/domain/decision.js';
import type { LedgerState } from '../../src/domain/ledger-state.js';
import type { OutputVersion } from '../../src/domain/output-version.js';
import {
  changedTerms,
  type KeyRef,
  pinDecided,
  refuseNoEffect,
  revisedConfig,
} from '../../src/domain/revision-rules.js';
import type { SourceRecord } from '../../src/domain/source-record.js';
import { type Scenario, scenarioArb, termsArb, unlistedKeys, v1Config } from './history-arbitraries.js';

/** Every key a history names: the listed ones of history-arbitraries.ts and the never-listed ones. */
const keyUniverse: readonly KeyRef[] = [
  ...v1Config.stock_keys.map(({ item, location }) => ({ item, location })),
  ...unlistedKeys,
];

/** What a drawn revision does to one key of `keyUniverse`. */
type KeyChange =
  | { kind: 'keep' }
  | { kind: 'drop' }
  | { kind: 'set'; partition: number; opening: number; threshold: number };

type Rule = { opening: number; threshold: number } | null;

/** A drawn revision: one change per key of `keyUniverse`, and the default rule (murmur2 only). */
export interface RevisionDraw {
  keys: KeyChange[];
  /** Whether new terms drawn for a decided key stand (to be refused); else the key keeps its entry. */
  insist: boolean;
  rule: 'keep' | Rule;
  /** Per partition: how far past its frontier the position lies, never past its next record. */
  slack: number[];
}

/** A revision to make before the history's record `before` (the history's length: after the last). */
interface PlannedRevision {
  before: number;
  draw: RevisionDraw;
}

export interface RevisedScenario extends Scenario {
  plans: PlannedRevision[];
}

const revisionsMax = 4;
const slackMax = 2;
const changeWeights = { keep: 4, drop: 1, set: 2 };
/** One draw in this many insists on new terms for decided keys: config-revise refuses most of them. */
const insistEvery = 4;

function keyChangeArb(partitions: number): fc.Arbitrary<KeyChange> {
  const set = fc
    .record({ partition: fc.nat({ max: partitions - 1 }), terms: termsArb })
    .map(({ partition, terms }): KeyChange => ({ kind: 'set', partition, ...terms }));
  return fc.oneof(
    { arbitrary: fc.constant<KeyChange>({ kind: 'keep' }), weight: changeWeights.keep },
    { arbitrary: fc.constant<KeyChange>({ kind: 'drop' }), weight: changeWeights.drop },
    { arbitrary: set, weight: changeWeights.set },
  );
}

function revisionDrawArb(partitions: number): fc.Arbitrary<RevisionDraw> {
  return fc.record({
    keys: fc.array(keyChangeArb(partitions), { minLength: keyUniverse.length, maxLength: keyUniverse.length }),
    insist: fc.nat({ max: insistEvery - 1 }).map((n) => n === 0),
    rule: fc.oneof(fc.constant<'keep'>('keep'), fc.constant(null), termsArb),
    slack: fc.array(fc.nat({ max: slackMax }), { minLength: partitions, maxLength: partitions }),
  });
}

/** A configuration of any version, a random history of it, and revisions planned at random points. */
export const revisedScenarioArb: fc.Arbitrary<RevisedScenario> = scenarioArb.chain((scenario) =>
  fc
    .array(
      fc.record({
        before: fc.nat({ max: scenario.records.length }),
        draw: revisionDrawArb(scenario.config.partitions),
      }),
      { maxLength: revisionsMax },
    )
    .map((plans) => ({ ...scenario, plans })),
);

/** The config file the draw makes of the newest revision (as an operator edits it). */
function drawnFile(latest: NamespaceConfig, draw: RevisionDraw, decided: ReadonlySet<string>): ConfigFile {
  const table = partitionerOf(latest) === 'table';
  const stockKeys = keyUniverse.flatMap((key, i) => {
    const drawn = draw.keys[i] as KeyChange;
    const spared = drawn.kind === 'set' && !draw.insist && decided.has(stockKeyId(key.item, key.location));
    const change: KeyChange = spared ? { kind: 'keep' } : drawn;
    const listed = latest.stock_keys.find((k) => k.item === key.item && k.location === key.location);
    if (change.kind === 'keep') return listed === undefined ? [] : [listed];
    if (change.kind === 'drop') return [];
    const { partition, opening, threshold } = change;
    return [table ? { ...key, partition, opening, threshold } : { ...key, opening, threshold }];
  });
  const { namespace: _n, partitions: _p, source_incarnation: _s, ...file } = latest;
  if (latest.schema_version === 1 || latest.partitioner === 'table')
    return { ...file, stock_keys: stockKeys } as ConfigFile;
  const rule = draw.rule === 'keep' ? latest.default_stock_key : draw.rule;
  return { ...file, ...(rule === undefined ? {} : { default_stock_key: rule }), stock_keys: stockKeys } as ConfigFile;
}

/** The keys with authority (an APPLIED decision) by `stockKeyId`. */
function decidedIds(state: LedgerState): Set<string> {
  return new Set([...state].filter(([, keyState]) => keyState.authority.size > 0).map(([id]) => id));
}

/** What `config-revise` asks the store: the decided keys among those the change touches. */
function decidedKeys(state: LedgerState, previous: NamespaceConfig, next: NamespaceConfig): KeyRef[] {
  const decided = [...decidedIds(state)]
    .map((id) => JSON.parse(id) as [string, string])
    .map(([item, location]) => ({ item, location }));
  const changed = changedTerms(previous, next);
  if (changed.defaultChanged) return decided;
  const listed = new Set(changed.listed.map((k) => stockKeyId(k.item, k.location)));
  return decided.filter((k) => listed.has(stockKeyId(k.item, k.location)));
}

/** Runs `make`, or says which of config-revise's refusals it met; any other error is a failure. */
function unlessRefused<T>(make: () => T, refusal: RegExp): T | undefined {
  try {
    return make();
  } catch (error) {
    if (error instanceof Error && refusal.test(error.message)) return undefined;
    throw error;
  }
}

/** The chain with the drawn revision at `from` appended, or why config-revise refuses it. */
function revise(chain: RevisionChain, draw: RevisionDraw, from: number[], state: LedgerState) {
  const previous = latestConfig(chain);
  const file = drawnFile(previous, draw, decidedIds(state));
  const next = revisedConfig(chain, file, 'drawn revision');
  const decided = decidedKeys(state, previous, next);
  const made = unlessRefused(() => pinDecided(previous, next, decided), /already has decisions under/);
  if (made === undefined) return 'refused';
  const what = 'drawn revision';
  const effect = () => refuseNoEffect(previous, made.config, made.pinned.length, what) ?? true;
  if (unlessRefused(effect, /must change something/) === undefined) return 'unchanged';
  const revisions = [...chain.revisions, nextRevision(chain, from, made.config)];
  return { chain: { base: chain.base, revisions }, pinned: made.pinned.length };
}

export interface OnlineRun {
  /** The chain made along the way. */
  chain: RevisionChain;
  decisions: Decision[];
  versions: OutputVersion[];
  /** Draws changing nothing, draws refused for a decided key, decided keys pinned: what the run exercised. */
  unchanged: number;
  refused: number;
  pinned: number;
}

/**
 * Decides the history in order, one record at a time under the revision in force, making each
 * planned revision at the frontiers of that moment: a worker and an operator taking turns.
 */
export function decideRevising({ config, records, plans }: RevisedScenario): OnlineRun {
  const run: OnlineRun = { chain: baseChain(config), decisions: [], versions: [], unchanged: 0, refused: 0, pinned: 0 };
  const state: LedgerState = new Map();
  const frontiers = new Array<number>(config.partitions).fill(0);
  for (let i = 0; i <= records.length; i++) {
    for (const { draw } of plans.filter((p) => p.before === i)) {
      for (const [p, frontier] of frontiers.entries()) {
        const next = records.slice(i).find((r) => r.partition === p)?.offset ?? Number.POSITIVE_INFINITY;
        frontiers[p] = Math.min(frontier + (draw.slack[p] ?? 0), next);
      }
      const made = revise(run.chain, draw, [...frontiers], state);
      if (typeof made === 'string') run[made]++;
      else [run.chain, run.pinned] = [made.chain, run.pinned + made.pinned];
    }
    const record = records[i] as SourceRecord | undefined;
    if (record === undefined) break;
    const result = decide(record, configAt(run.chain, record.partition, record.offset), state);
    frontiers[record.partition] = record.offset + 1;
    run.decisions.push(result.decision);
    run.versions.push(...result.newVersions);
  }
  return run;
}
