/**
 * The HTTP endpoint of `--metrics-addr HOST:PORT` (AMENDS_METRICS_ADDR) on worker, relay
 * and view: `/metrics` in Prometheus text format (prom-client), `/healthz` (the process is
 * alive and its event loop turns) and `/readyz` (one rule for every role, role-readiness.ts:
 * 200 for an active process or a hot standby, its one line starting `active` or `standby`;
 * 503 otherwise). Nothing else is served; nothing secret is in any answer.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { operationalError, usageError } from '../../kernel/amends-error.js';
import { errorMessage } from '../../kernel/error-message.js';

/** How often the event-loop watchdog ticks, and how late a tick may be before /healthz fails. */
const eventLoopTickMs = 500;
const eventLoopStallMaxMs = 5_000;

export interface Readiness {
  ready: boolean;
  /** One line: why not (or what it is doing). */
  detail: string;
}

export interface MetricsServerOptions {
  address: MetricsAddress;
  registry: Registry;
  readiness: () => Readiness;
}

export interface MetricsAddress {
  host: string;
  port: number;
}

/** `--metrics-addr` wins over AMENDS_METRICS_ADDR; undefined (no server) when neither is set. */
export function metricsAddressFrom(flag: string | undefined, env: NodeJS.ProcessEnv): MetricsAddress | undefined {
  const text = flag?.trim() || env.AMENDS_METRICS_ADDR?.trim();
  if (!text) return undefined;
  // HOST:PORT, the host possibly an IPv6 literal in brackets ([::1]:9464).
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (match === null || !Number.isInteger(port) || port > 65_535) {
    throw usageError(`--metrics-addr ${text}: expected HOST:PORT, e.g. 127.0.0.1:9464 (port 0 picks a free one)`);
  }
  return { host: (match[1] ?? match[2]) as string, port };
}

/**
 * prom-client's default gauges whose names end in `_total`, which `promtool check metrics`
 * refuses ("non-counter metrics should not have _total suffix"): Prometheus reserves the
 * suffix for counters. Each is the sum of the by-type gauge beside it
 * (`sum(nodejs_active_handles)`), so dropping them loses nothing.
 */
const gaugesNamedLikeCounters = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
] as const;

/** A registry with Node's standard process metrics (process_*, nodejs_*) next to amends_*. */
export function newMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const name of gaugesNamedLikeCounters) registry.removeSingleMetric(name);
  return registry;
}

export class MetricsServer {
  private lastTickAt = Date.now();
  private readonly watchdog: NodeJS.Timeout;

  private constructor(
    private readonly server: Server,
    readonly address: AddressInfo,
    watchdog: NodeJS.Timeout,
  ) {
    this.watchdog = watchdog;
  }

  /** Listens; a taken or invalid address is one line (exit 1). */
  static async start(options: MetricsServerOptions): Promise<MetricsServer> {
    let instance: MetricsServer | undefined;
    const server = createServer((request, response) => {
      instance?.answer(request, response, options).catch((error: unknown) => {
        respond(response, 500, `metrics failed: ${errorMessage(error)}\n`);
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.address.port, options.address.host, () => {
        server.off('error', reject);
        resolve();
      });
    }).catch((error: NodeJS.ErrnoException) => {
      const where = `${options.address.host}:${options.address.port}`;
      throw operationalError(`--metrics-addr ${where}: cannot listen (${error.code ?? error.message})`);
    });
    // The endpoint never keeps a process alive by itself: a command that ends early still exits.
    server.unref();
    const watchdog = setInterval(() => {
      if (instance !== undefined) instance.lastTickAt = Date.now();
    }, eventLoopTickMs);
    watchdog.unref();
    instance = new MetricsServer(server, server.address() as AddressInfo, watchdog);
    return instance;
  }

  private async answer(request: IncomingMessage, response: ServerResponse, options: MetricsServerOptions) {
    const path = (request.url ?? '/').split('?', 1)[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') return respond(response, 405, 'GET only\n');
    if (path === '/metrics') {
      const text = await options.registry.metrics();
      return respond(response, 200, text, options.registry.contentType);
    }
    if (path === '/healthz') {
      const lateMs = Date.now() - this.lastTickAt;
      return lateMs > eventLoopStallMaxMs
        ? respond(response, 503, `event loop stalled ${lateMs} ms\n`)
        : respond(response, 200, 'ok\n');
    }
    if (path === '/readyz') {
      const { ready, detail } = options.readiness();
      return respond(response, ready ? 200 : 503, `${detail}\n`);
    }
    return respond(response, 404, 'not found: /metrics, /healthz, /readyz\n');
  }

  async close(): Promise<void> {
    clearInterval(this.watchdog);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function respond(response: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  response.end(body);
}
