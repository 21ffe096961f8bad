/**
 * amends' error values (src/kernel): the `outage` flag followed along the cause chain, the
 * next step an error may carry and where the CLI prints it (src/cli/exit.ts), and the one
 * message of anything thrown.
 */
import { describe, expect, it } from 'vitest';
import { diagnosticFor, nextStepLine } from '../../src/cli/exit.js';
import { AmendsError, operationalError, usageError } from '../../src/kernel/amends-error.js';
import { errorMessage } from '../../src/kernel/error-message.js';
import { isOutageError } from '../../src/kernel/outage-errors.js';

const outage = (message: string, cause?: unknown) => operationalError(message, cause, { outage: true });

describe('isOutageError (the kernel: the flag only)', () => {
  it('is true for an error flagged an outage, or one in its cause chain', () => {
    expect(isOutageError(outage('the database did not answer'))).toBe(true);
    expect(isOutageError(operationalError('reading the frontiers failed', outage('no answer')))).toBe(true);
    expect(isOutageError(new Error('wrapped', { cause: outage('no answer') }))).toBe(true);
  });

  it('is false for an unflagged chain, whatever its texts say', () => {
    expect(isOutageError(operationalError('the store is inconsistent'))).toBe(false);
    expect(isOutageError(new Error('Local: Timed out'))).toBe(false);
    expect(isOutageError(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))).toBe(false);
    expect(isOutageError(undefined)).toBe(false);
    expect(isOutageError('a string')).toBe(false);
    expect(isOutageError({ outage: 'yes' })).toBe(false);
  });

  it('follows at most 8 links of the chain', () => {
    const chain = (links: number): unknown => {
      let e: unknown = outage('the deepest');
      for (let i = 1; i < links; i++) e = new Error(`link ${i}`, { cause: e });
      return e;
    };
    expect(isOutageError(chain(8))).toBe(true);
    expect(isOutageError(chain(9))).toBe(false);
  });

  it("asks the caller's test of one error at every link", () => {
    const seen: unknown[] = [];
    const inner = new Error('inner');
    const outer = new Error('outer', { cause: inner });
    const recognises = (link: unknown) => {
      seen.push(link);
      return link === inner;
    };
    expect(isOutageError(outer, recognises)).toBe(true);
    expect(seen).toEqual([outer, inner]);
  });
});

describe('AmendsError', () => {
  it('is no outage and has no next step unless told', () => {
    const error = operationalError('failed');
    expect(error.outage).toBe(false);
    expect(error.nextStep).toBeUndefined();
    expect(error.cause).toBeUndefined();
    expect('cause' in error).toBe(false);
  });

  it('keeps its cause, outage and next step', () => {
    const cause = new Error('client');
    const error = new AmendsError('operational', 'failed', { cause, outage: true, nextStep: 'start it' });
    expect(error.cause).toBe(cause);
    expect(error.outage).toBe(true);
    expect(error.nextStep).toBe('start it');
  });
});

describe('the exit path', () => {
  it('prints a next step on its own line, after the one-line diagnostic', () => {
    const error = operationalError('cannot reach the database', undefined, { nextStep: 'start it (npm run up)' });
    expect(diagnosticFor('amends worker', error)).toBe('amends worker: cannot reach the database');
    expect(nextStepLine('amends worker', error)).toBe('amends worker: next step: start it (npm run up)');
  });

  it('prints none when the error names none', () => {
    expect(nextStepLine('amends worker', operationalError('failed'))).toBeUndefined();
    expect(nextStepLine('amends worker', usageError('bad flag'))).toBeUndefined();
    expect(nextStepLine('amends worker', new Error('bug'))).toBeUndefined();
  });
});

describe('errorMessage', () => {
  it("is an Error's message, and anything else as a string", () => {
    expect(errorMessage(new Error('broken'))).toBe('broken');
    expect(errorMessage(operationalError('failed'))).toBe('failed');
    expect(errorMessage(new TypeError(''))).toBe('');
    expect(errorMessage('plain text')).toBe('plain text');
    expect(errorMessage(42)).toBe('42');
    expect(errorMessage(undefined)).toBe('undefined');
    expect(errorMessage(null)).toBe('null');
    expect(errorMessage({ message: 'not an Error' })).toBe('[object Object]');
  });
});
