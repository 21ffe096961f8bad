/**
 * The local stack's endpoints (scripts/stack.sh, `npm run up`). Advice to start the stack, or
 * its local-only password, fits a diagnostic only when the address is one of these: an
 * operator pointing amends at their own cluster is told to check the address, the network and
 * the credentials instead (issue 35).
 */

/** The ports scripts/stack.sh listens on: Kafka PLAINTEXT and SASL_SSL, PostgreSQL. */
export const localStackPorts = { kafka: [19092, 19094], postgres: [15432] } as const;

const loopbackHosts = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/** Whether `host:port` is the local stack's, for a service listening on `ports`. */
export function isLocalStackAddress(host: string, port: number, ports: readonly number[]): boolean {
  return loopbackHosts.has(host.toLowerCase()) && ports.includes(port);
}

/** `host:port` split at its last colon (IPv6 literals keep their brackets); no port gives NaN. */
export function splitHostPort(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  if (at <= 0) return { host: address, port: Number.NaN };
  return { host: address.slice(0, at), port: Number(address.slice(at + 1)) };
}
