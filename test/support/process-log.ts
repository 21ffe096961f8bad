/**
 * The log contract of the long-running processes (docs/operations.md#logs), read from a
 * child's stderr lines (child-process.ts): every line is a JSON object with `level`, `time`,
 * `msg` and `role`; `namespace` from the moment the manifest is read; a failure is one line
 * of level fatal, the last, whose `error` is the diagnostic a person would read.
 */
import { expect } from 'vitest';
import type { ChildLogLine } from '../../src/io/process/child-process.js';

interface LoggingChild {
  readonly logs: ChildLogLine[];
  tail(lines?: number): string;
}

/** Every line JSON with level, time, msg and `role` (and `namespace`, when given) on it. */
export function expectLogLines(child: LoggingChild, role: string, namespace?: string): void {
  for (const line of child.logs) {
    expect(line.msg, `not a JSON log line: ${line.raw}`).toBeTypeOf('string');
    expect(line, line.raw).toMatchObject({ role, level: expect.any(String), time: expect.any(String) });
    if (namespace !== undefined) expect(line.namespace, line.raw).toBe(namespace);
  }
}

/** The fatal lines as a person reads them (`amends <role>: <error>`), and any line that is not JSON. */
export function diagnosticLines(child: LoggingChild): string[] {
  return child.logs
    .filter((l) => l.level === 'fatal' || l.msg === undefined)
    .map((l) => (l.level === 'fatal' ? `amends ${String(l.role)}: ${String(l.error)}` : l.raw));
}

/**
 * A failed process's log: all lines JSON (with `role`), exactly one fatal line, the last,
 * with `exit_code`; returns its diagnostic as `amends <role>: <error>`.
 */
export function expectFailureLine(child: LoggingChild, role: string, exitCode = 1): string {
  expectLogLines(child, role);
  const fatal = child.logs.filter((l) => l.level === 'fatal');
  expect(fatal, child.tail()).toHaveLength(1);
  expect(child.logs.at(-1), child.tail()).toBe(fatal[0]);
  expect(fatal[0]).toMatchObject({ msg: 'failed', exit_code: exitCode, error: expect.any(String) });
  return diagnosticLines(child)[0] as string;
}
