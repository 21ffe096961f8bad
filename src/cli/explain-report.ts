/**
 * What `amendsctl explain` prints (docs/design.md#explain): one day's closing as of a bound,
 * decomposed into the key's opening plus each contributing transaction, and the day's version
 * history up to the bound. The document is built from what the read API answered; the sum is
 * checked here, so a decomposition that does not add up to the stored closing is a bug report,
 * never a printed explanation.
 */
import { describeAsOf } from '../domain/source-position.js';
import type { ExplainRead } from '../io/store/explain-read.js';
import type { DayVersion } from '../io/store/read-api.js';
import { assertInvariant } from '../kernel/invariant.js';
import { textTable } from './text-table.js';

/** What explain read, and whether each contribution carries its raw key and envelope bytes. */
export type ExplainInput = ExplainRead & { envelopes: boolean };

const base64 = (bytes: Buffer | null) => (bytes === null ? null : bytes.toString('base64'));

export function explanationDocument(input: ExplainInput) {
  const current = input.versions[input.versions.length - 1];
  assertInvariant(current !== undefined, `explain ${input.day} without a version`);
  const contributions = input.contributions?.map((c) => ({
    txn: c.txn,
    rev: c.rev,
    day: c.day,
    qty: c.qty,
    source: c.source,
    decided_at: c.decided_at,
    ...(input.envelopes ? { key_b64: base64(c.key), value_b64: base64(c.value) } : {}),
  }));
  if (contributions !== undefined) {
    const sum = contributions.reduce((total, c) => total + c.qty, input.opening);
    assertInvariant(
      sum === current.closing,
      `${input.item}@${input.location} ${input.day}: opening ${input.opening} + the contributions = ${sum}, but version ${current.version} says ${current.closing}`,
    );
  }
  return {
    namespace: input.namespace,
    item: input.item,
    location: input.location,
    day: input.day,
    as_of: { kind: input.asOf.kind, time: input.asOf.time, through: [...input.asOf.through] },
    opening: input.opening,
    balance: versionEntry(current),
    contributions: contributions ?? null,
    history: input.versions.map(versionEntry),
    later_versions: input.later,
  };
}

export type ExplainDocument = ReturnType<typeof explanationDocument>;

function versionEntry(v: DayVersion) {
  return {
    version: v.version,
    closing: v.closing,
    status: v.status,
    retracted: v.retracted,
    cause: v.cause,
    committed_at: v.committed_at,
  };
}

const signed = (n: number) => (n > 0 ? `+${n}` : String(n));
const at = (c: { partition: number; offset: number }) => `${c.partition}:${c.offset}`;

function causeText(cause: ExplainDocument['balance']['cause']): string {
  const what = cause.txn === null ? (cause.outcome ?? '?') : `${cause.txn} rev ${cause.rev}`;
  return `${what} at ${at(cause)}`;
}

export function renderExplanation(d: ExplainDocument): string {
  const b = d.balance;
  const total = b.version + d.later_versions;
  const lines = [
    `${d.item}@${d.location} ${d.day} in namespace ${d.namespace}, ${describeAsOf(d.as_of)}`,
    b.retracted
      ? `retracted at version ${b.version} of ${total}: no closing (no transaction posts on this day), caused by ${causeText(b.cause)}, committed ${b.committed_at}`
      : `closing ${b.closing} ${b.status}: version ${b.version} of ${total}, caused by ${causeText(b.cause)}, committed ${b.committed_at}`,
    '',
  ];
  if (d.contributions !== null) lines.push(contributionsTable(d), '');
  lines.push(`history of ${d.day}`, historyTable(d.history));
  if (d.later_versions > 0) {
    lines.push(
      `(${d.later_versions} later version${d.later_versions > 1 ? 's' : ''} not shown: decided after the bound)`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function contributionsTable(d: ExplainDocument): string {
  const contributions = d.contributions ?? [];
  let running = d.opening;
  const rows = contributions.map((c) => {
    running += c.qty;
    const row = [c.day, c.txn, String(c.rev), signed(c.qty), String(running), at(c.source), c.decided_at];
    if ('value_b64' in c)
      row.push(typeof c.value_b64 === 'string' ? Buffer.from(c.value_b64, 'base64').toString() : '-');
    return row;
  });
  const headers = ['day', 'txn', 'rev', 'qty', 'running', 'source', 'decided'];
  if (contributions.some((c) => 'value_b64' in c)) headers.push('envelope');
  const table = textTable(headers, [['', 'opening', '', '', String(d.opening), '', ''], ...rows]);
  return `${table}\nclosing ${d.balance.closing} = opening ${d.opening} + ${contributions.length} transaction${contributions.length === 1 ? '' : 's'}`;
}

function historyTable(history: ExplainDocument['history']): string {
  return textTable(
    ['version', 'closing', 'status', 'cause', 'outcome', 'txn', 'rev', 'committed'],
    history.map((v) => [
      String(v.version),
      v.retracted ? 'retracted' : String(v.closing),
      v.status ?? '-',
      at(v.cause),
      v.cause.outcome ?? '-',
      v.cause.txn ?? '-',
      v.cause.rev === null ? '-' : String(v.cause.rev),
      v.committed_at,
    ]),
  );
}
