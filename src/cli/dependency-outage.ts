/**
 * The outage test of the commands that ride outages (relay, view, worker, and the one-shot
 * commands' retries): the `outage` flag the adapters set where they wrap a client's error,
 * and, for a client's error that reaches the rider unwrapped (a pooled query's, a socket's),
 * the store's and the Kafka room's tests of one error. Together they recognise exactly what
 * the one list of texts in the kernel recognised before issue 31 (docs/choices.md).
 */

import { isKafkaOutage } from '../io/kafka/kafka-errors.js';
import { isPgOutage } from '../io/store/pg-errors.js';
import { isOutageError } from '../kernel/outage-errors.js';

/** Whether one error, not its causes, is an outage of the database or of the brokers. */
function isClientOutage(link: unknown): boolean {
  return isPgOutage(link) || isKafkaOutage(link);
}

/** True when `error` or anything in its cause chain is a database or broker outage. */
export function isDependencyOutage(error: unknown): boolean {
  return isOutageError(error, isClientOutage);
}
