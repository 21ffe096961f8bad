/**
 * What every long-running process (worker, relay, view) does the same way before its own
 * work: name itself, stop on SIGINT/SIGTERM, and (relay, view) find its output binding.
 */
import { hostname } from 'node:os';
import type { Manifest } from '../domain/config.js';
import { usageError } from '../kernel/amends-error.js';
import type { JsonLog } from '../process/json-log.js';
import { type RideOptions, rideThrough } from '../process/ride-through.js';
import { registerNamespace } from '../store/namespace-registry.js';
import { type Database, describeDatabaseError } from '../store/postgres.js';
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

/**
 * Registers the namespace (worker.md §1), riding a database outage within the budget: a
 * supervisor restarts a process while the database is still away, or its connections are cut
 * between the open and this step. Resolves false on a stop while it waits.
 */
export async function registerRiding(
  ride: RideOptions,
  db: Database,
  manifest: Manifest,
  databaseUrl: string,
): Promise<boolean> {
  const register = () =>
    registerNamespace(db.pool, manifest).then(
      () => true,
      (error: unknown) => {
        throw describeDatabaseError(error, databaseUrl, `registering namespace ${manifest.config.namespace}`);
      },
    );
  return (await rideThrough(ride, register)) === true;
}

/** The output binding (after registering), ridden like `registerRiding`; undefined on a stop. */
export function registeredBindingRiding(
  ride: RideOptions,
  db: Database,
  manifest: Manifest,
  manifestPath: string,
  databaseUrl: string,
): Promise<OutputBinding | undefined> {
  return rideThrough(ride, () => registeredBinding(db, manifest, manifestPath, databaseUrl));
}

/** Registers the namespace (worker.md §1) and returns its output binding, or one line saying what to do. */
async function registeredBinding(
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
