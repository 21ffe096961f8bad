/**
 * The flags of the long-running processes (worker, relay, view) for operators:
 * `--metrics-addr HOST:PORT` (AMENDS_METRICS_ADDR), `--log-level` (AMENDS_LOG_LEVEL) and
 * `--log-format` (AMENDS_LOG_FORMAT).
 */

import type { Registry } from 'prom-client';
import type { JsonLog } from '../io/process/json-log.js';
import { MetricsServer, metricsAddressFrom, type Readiness } from '../io/process/metrics-server.js';
import { flagRows } from './help-text.js';

export const observabilityFlags = {
  metricsAddr: { type: 'string' },
  logLevel: { type: 'string' },
  logFormat: { type: 'string' },
} as const;

/** The help of `observabilityFlags`, its descriptions at `column` of the command's Flags section. */
export function observabilityFlagsHelp(column: number): string {
  return flagRows(column, [
    ['--metrics-addr HOST:PORT', 'serve /metrics, /healthz, /readyz (default: $AMENDS_METRICS_ADDR; off)'],
    ['--log-level LEVEL', 'debug, info, warn or error (default: $AMENDS_LOG_LEVEL or info);'],
    ['', 'debug adds a line per store batch, relay batch and view poll'],
    ['--log-format F', 'json or pretty (default: $AMENDS_LOG_FORMAT, else pretty on a'],
    ['', 'terminal and json anywhere else: pipes, files, containers)'],
  ]);
}

/** Starts the metrics endpoint when an address is set; logs where it listens (port 0 picks one). */
export async function startMetricsEndpoint(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  registry: Registry,
  readiness: () => Readiness,
  log: JsonLog,
): Promise<MetricsServer | undefined> {
  const address = metricsAddressFrom(flag, env);
  if (address === undefined) return undefined;
  const server = await MetricsServer.start({ address, registry, readiness });
  const { address: host, port } = server.address;
  log.write('metrics_listening', { address: `${host.includes(':') ? `[${host}]` : host}:${port}` });
  return server;
}
