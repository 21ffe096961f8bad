/**
 * How the read-only commands (inspect, export, explain, balances, tui, verify) open the
 * database of a namespace: no migration, no registration, read-only sessions. Looking at something must not create it:
 * an inspect with a mistyped manifest would otherwise register a namespace (or migrate a
 * database) that nobody asked for, and every later command would then accept it.
 */

import type { Manifest } from '../../domain/config.js';
import { invalidInput } from '../../kernel/amends-error.js';
import { readRegisteredNamespace } from './namespace-registry.js';
import { Database, databaseTarget, describeDatabaseError } from './postgres.js';

/** The open database, once the manifest's namespace is known there with this manifest. */
export async function openRegisteredNamespace(
  databaseUrl: string,
  manifest: Manifest,
  command: string,
  applicationName = `${command} pid ${process.pid}`,
): Promise<Database> {
  const namespace = manifest.config.namespace;
  const db = await Database.openReadOnly(databaseUrl, applicationName);
  try {
    const registered = await readRegisteredNamespace(db.pool, manifest).catch((error: unknown) => {
      throw describeDatabaseError(error, databaseUrl, `reading namespace ${namespace}`);
    });
    if (!registered) {
      throw invalidInput(
        `namespace ${namespace} is not registered in the database ${databaseTarget(databaseUrl)}: ${command} registers nothing; amends worker or amendsctl source-load with this manifest registers it (or check AMENDS_DATABASE_URL and the manifest)`,
      );
    }
    return db;
  } catch (error) {
    await db.close();
    throw error;
  }
}
