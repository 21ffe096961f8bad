/**
 * The worked example of domain.md §7: the fixtures' configuration and input, and the exact
 * lines the engine, the oracle and `amendsctl simulate` must print for it.
 */
import { readFileSync } from 'node:fs';
import { type NamespaceConfig, parseConfigFile, parseNamespaceConfig } from '../../src/domain/config.js';

export const fixture = (name: string) => readFileSync(new URL(`../../fixtures/${name}`, import.meta.url), 'utf8');

/** fixtures/default.config.json completed as source-create would: namespace, 2 partitions, a dummy incarnation. */
export const demoConfig: NamespaceConfig = parseNamespaceConfig({
  namespace: 'source-demo-1',
  partitions: 2,
  source_incarnation: `kafka:${'0123456789abcdef'.repeat(2)}`,
  ...parseConfigFile(JSON.parse(fixture('default.config.json')), 2),
});

export const workedExampleInput = ['before.jsonl', 'correction.jsonl', 'cancel-last-day.jsonl'].map(fixture).join('');

const decision = (offset: number, outcome: string, txn: string, rev: number) =>
  `{"type":"decision","partition":0,"offset":${offset},"outcome":"${outcome}","item":"widget","location":"berlin","txn":"${txn}","rev":${rev}}`;
const output = (day: string, version: number, closing: number | null, status: string | null, cause: number) =>
  `{"type":"output","item":"widget","location":"berlin","day":"2026-03-${day}","version":${version},"closing":${closing},"status":${status === null ? null : `"${status}"`},"retracted":${closing === null},"cause":{"partition":0,"offset":${cause}}}`;

/** The lines domain.md §7 tells, in export order. */
export const workedExampleLines = [
  decision(0, 'APPLIED', 'T1', 1),
  decision(1, 'APPLIED', 'T2', 1),
  decision(2, 'APPLIED', 'T3', 1),
  decision(3, 'APPLIED', 'T4', 1),
  decision(4, 'APPLIED', 'T5', 1),
  decision(5, 'DUPLICATE', 'T2', 1),
  decision(6, 'APPLIED', 'T2', 2),
  decision(7, 'STALE', 'T2', 1),
  decision(8, 'APPLIED', 'T4', 2),
  decision(9, 'APPLIED', 'T5', 2),
  output('02', 1, 70, 'OK', 0),
  output('03', 1, 45, 'OK', 1),
  output('03', 2, 55, 'OK', 6),
  output('04', 1, 55, 'OK', 2),
  output('04', 2, 65, 'OK', 6),
  output('05', 1, 15, 'LOW', 3),
  output('05', 2, 10, 'LOW', 4),
  output('05', 3, 20, 'OK', 6),
  output('05', 4, 60, 'OK', 8),
  output('05', 5, null, null, 9),
];
