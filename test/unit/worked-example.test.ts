/**
 * domain.md §7 from the supplied fixtures: exact decision and output lines, from the
 * incremental engine and from the oracle.
 */
import { describe, expect, it } from 'vitest';
import { decisionLine, outputLine } from '../../src/domain/export-lines.js';
import { parseSimulationInput } from '../../src/domain/simulation-input.js';
import { runOracle } from '../support/reference-oracle.js';
import { runEngine } from './ledger-test-kit.js';
import { demoConfig, workedExampleInput, workedExampleLines } from './worked-example-kit.js';

describe('worked example (domain.md §7)', () => {
  const records = parseSimulationInput(workedExampleInput, demoConfig);

  it('reads the fixtures as offsets 0-9 of partition 0', () => {
    expect(records.map((r) => `${r.partition}:${r.offset}`)).toEqual(Array.from({ length: 10 }, (_, i) => `0:${i}`));
  });

  it('the incremental engine prints the exact lines', () => {
    const run = runEngine(demoConfig, records);
    expect([...run.decisions.map(decisionLine), ...run.versions.map(outputLine)]).toEqual(workedExampleLines);
  });

  it('the oracle prints the exact lines', () => {
    const run = runOracle(demoConfig, records);
    expect([...run.decisions.map(decisionLine), ...run.versions.map(outputLine)]).toEqual(workedExampleLines);
  });

  it('the retraction line carries null closing and status', () => {
    expect(workedExampleLines.at(-1)).toContain('"closing":null,"status":null,"retracted":true');
  });
});
