/** A `--namespace` flag value: the namespace rule of docs/design.md#configuration, or a usage error (exit 2). */

import { validNamespace } from '../domain/config.js';
import { usageError } from '../kernel/amends-error.js';

export function namespaceFlag(value: string | undefined): string {
  if (value === undefined || value === '') throw usageError('--namespace is required');
  if (!validNamespace(value)) {
    throw usageError(`--namespace ${JSON.stringify(value)} must match [a-z0-9][a-z0-9-]{0,62}`);
  }
  return value;
}
