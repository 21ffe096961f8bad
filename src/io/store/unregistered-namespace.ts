/**
 * Refuses a namespace name that the database already knows. source-create and
 * rebuild-create print manifests for *new* namespaces: a manifest over a registered name
 * would be refused by every later command (its config digest differs), or would not start
 * at offset 0. They need no database, so the check runs only when AMENDS_DATABASE_URL is
 * set; it only reads: no migration, no registration (a fresh database has no amends
 * schema yet, which means no namespace is registered).
 */
import { invalidInput, operationalError } from '../../kernel/amends-error.js';
import { readNamespace } from './namespace-registry.js';
import { connectDedicated, databaseUrlFrom, describeDatabaseError } from './postgres.js';

/** PostgreSQL's undefined_table: the namespaces table does not exist yet. */
const undefinedTable = '42P01';

export type RegistrationCheck = 'checked' | 'skipped';

/**
 * `command` names the caller in diagnostics ("source-create"). Returns `skipped` when
 * AMENDS_DATABASE_URL is unset, so the caller can say so in one line.
 */
export async function refuseRegisteredNamespace(
  env: NodeJS.ProcessEnv,
  namespace: string,
  command: string,
): Promise<RegistrationCheck> {
  if (!env.AMENDS_DATABASE_URL?.trim()) return 'skipped';
  const url = databaseUrlFrom(env);
  const client = await connectDedicated(url, `amendsctl ${command} pid ${process.pid}`).catch((error: unknown) => {
    const { message } = describeDatabaseError(error, url, 'connecting');
    throw operationalError(
      `${message}; ${command} looks namespace ${namespace} up only because AMENDS_DATABASE_URL is set: unset it to skip that check`,
      error,
    );
  });
  try {
    const existing = await readNamespace(client, namespace).catch((error: unknown) => {
      if ((error as { code?: unknown }).code === undefinedTable) return undefined;
      throw describeDatabaseError(error, url, `looking up namespace ${namespace}`);
    });
    if (existing) {
      throw invalidInput(
        `namespace ${namespace} is registered already (source topic ${existing.sourceTopic}, ${existing.sourceIncarnation}, since ${existing.createdAt.toISOString()}): choose a new namespace, or recover its manifest with amendsctl manifest-recover --namespace ${namespace}`,
      );
    }
    return 'checked';
  } finally {
    await client.end().catch(() => {});
  }
}

/** The one line a caller prints on stderr when the check was skipped. */
export function skippedCheckNote(command: string, namespace: string): string {
  return `amendsctl ${command}: AMENDS_DATABASE_URL is not set: did not check whether namespace ${namespace} is registered already\n`;
}
