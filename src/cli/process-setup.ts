/**
 * What every long-running process (worker, relay, view) does the same way before its own
 * work: name itself, stop on SIGINT/SIGTERM, and (relay, view) find its output binding.
 */
import { hostname } from 'node:os';
import { usageError } from '../domain/amends-error.js';
import type { Manifest } from '../domain/config.js';
import type { JsonLog } from '../io/json-log.js';
import { registerNamespace } from '../io/namespace-registry.js';
import { type Database, describeDatabaseError } from '../io/postgres.js';
import { type OutputBinding, requireBinding } from '../transport/output-binding.js';

const instanceIdPattern = /^[A-Za-z0-9._-]{1,200}$/;

/** Checks `--instance-id` and stray arguments; the id is the flag or host-pid. */
export function processIdentity(instanceId: string | undefined, input: readonly string[]): string {
  if (instanceId !== undefined && !instanceIdPattern.test(instanceId)) {
    throw usageError('--instance-id must be 1-200 characters of [A-Za-z0-9._-]');
  }
  if (input.length > 0) throw usageError(`unexpected argument ${JSON.stringify(input[0])}`);
  return instanceId ?? `${hostname()}-${process.pid}`;
}

/** An abort signal fired (and logged) by SIGINT or SIGTERM; `detach` removes the handlers. */
export function stopOnSignals(log: JsonLog): { signal: AbortSignal; detach(): void } {
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    log.write('signal', { signal });
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: stop.signal,
    detach: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** Registers the namespace (worker.md §1) and returns its output binding, or one line saying what to do. */
export async function registeredBinding(
  db: Database,
  manifest: Manifest,
  manifestPath: string,
  databaseUrl: string,
): Promise<OutputBinding> {
  const namespace = manifest.config.namespace;
  try {
    await registerNamespace(db.pool, manifest);
    return await requireBinding(db.pool, namespace, manifestPath);
  } catch (error) {
    throw describeDatabaseError(error, databaseUrl, `reading the output binding of namespace ${namespace}`);
  }
}
