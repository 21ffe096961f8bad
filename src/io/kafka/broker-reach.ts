/**
 * What librdkafka says about reaching the brokers, so that a failed request names its cause
 * (refused, unresolvable, a listener that speaks another protocol, a failed TLS or SASL
 * handshake) instead of `Local: Timed out`, and so that a caller can tell when no bootstrap
 * address will answer however long it waits (issue 35).
 *
 * librdkafka tells a failed connection only in its log (one `FAIL` line per broker, identical
 * repeats suppressed for a while) and, while no broker connection is up, in a repeated error
 * event (ERR__ALL_BROKERS_DOWN). So each address's last failure (log facility FAIL) is kept,
 * and it is taken as current only when such an event came after the request started. Texts checked against
 * librdkafka 2.x in @confluentinc/kafka-javascript 1.10.1 (docs/operations.md#connecting-to-a-secured-kafka-cluster).
 */
import { lookup } from 'node:dns/promises';
import type { EventEmitter } from 'node:events';
import { isIP } from 'node:net';
import { errorMessage } from '../../kernel/error-message.js';
import { splitHostPort } from '../process/local-stack.js';
import { kafkaClientSettings } from './client-settings.js';
import {
  bootstrapAddresses,
  brokerReachAdvice,
  describeKafkaError,
  kafkaErrorCode,
  kafkaErrorCodes,
} from './kafka-connection.js';

type Failure =
  | { kind: 'refused'; ips: Set<string> }
  | { kind: 'unresolvable' }
  | { kind: 'closed-in-handshake' }
  | { kind: 'plaintext-listener' }
  | { kind: 'no-sasl' }
  | { kind: 'handshake'; detail: string };

/** `[thrd:…]: [proto://]host:port/(bootstrap|id): message` */
const logLine = /\]: (?:[a-z_]+:\/\/)?(\S+?)\/(?:bootstrap|-?\d+): (.*)$/i;
const refusedLine = /Connect to ipv[46]#\[?([^\]\s]+?)\]?:\d+ failed: Connection refused/;
const allBrokersDown = /all broker connections are down/i;
/**
 * A TLS client at a PLAINTEXT listener: librdkafka's own guess, and the line it alternates
 * with (the listener closes the connection during the TLS handshake).
 */
const plaintextListenerLine =
  /connecting to a PLAINTEXT broker listener\?|SSL connection closed by peer.*in state SSL_HANDSHAKE\b/;
/**
 * A broker that closes a new connection at the client's first request (ApiVersion), or within
 * seconds of a TLS handshake, is in practice a listener that expects another protocol: a TLS
 * or SASL one reading a plaintext client's bytes, a SASL_SSL one a client without SASL. A
 * heuristic, and named as one. (An idle connection is closed after minutes, in state UP.)
 */
const closedInHandshakeLine = /connection closed by peer.*\(after (\d+)ms in state (APIVERSION_QUERY|UP)\b/;
const closedInHandshakeMsMax = 5_000;
/** A SASL client at a listener without SASL: the broker lists no mechanism. */
const noSaslLine = /mechanism handshake failed: .*supported mechanisms:\s*(\(|$)/;
const handshakeLine = /(SASL authentication error|SASL \S+ mechanism handshake failed|SSL handshake failed)[^(]*/;

/** A failed request's error, reworded by what the connections showed: its message is the cause. */
class BrokerReachError extends Error {}

export class BrokerReach {
  private readonly addresses: string[];
  private readonly failures = new Map<string, Failure>();
  /** Every address each bootstrap host resolves to (the IP itself for a literal). */
  private readonly resolved = new Map<string, Set<string>>();
  private downEvents = 0;

  constructor(readonly brokers: string) {
    this.addresses = bootstrapAddresses(brokers);
    for (const address of this.addresses) this.resolve(address);
  }

  /** Listens to a consumer's or producer's log and error events. */
  watch(client: EventEmitter): void {
    const { 'event.log': onLog, 'event.error': onError } = this.handlers;
    client.on('event.log', onLog).on('event.error', onError);
  }

  /** The handlers to give a librdkafka client (`create(config, handlers)` or `on`). */
  get handlers(): {
    'event.log': (entry: { fac?: string; message?: string }) => void;
    'event.error': (error: unknown) => void;
  } {
    return {
      'event.log': (entry) => {
        if (entry.fac === 'FAIL') this.onFailure(entry.message ?? '');
      },
      'event.error': (error) => {
        if (allBrokersDown.test(describeKafkaError(error))) this.downEvents += 1;
      },
    };
  }

  /**
   * Settles like `request`; when it fails while no broker connection was up, its error says what
   * the connections showed (BrokerReachError, the client's error as its cause).
   */
  async within<T>(request: Promise<T>): Promise<T> {
    const since = this.downEvents;
    try {
      return await request;
    } catch (error) {
      const seen = this.downEvents > since ? this.describeFailures() : null;
      throw seen === null ? error : new BrokerReachError(seen, { cause: error });
    }
  }

  /**
   * Whether every bootstrap address failed in a way that waiting does not mend: refused (at each
   * address its name resolves to), unresolvable, or a handshake that cannot succeed (another
   * protocol, wrong credentials or trust).
   */
  noneWillAnswer(): boolean {
    return this.addresses.every((address) => {
      const failure = this.failures.get(address);
      if (failure?.kind !== 'refused') return failure !== undefined;
      const ips = this.resolved.get(address);
      return ips !== undefined && [...ips].every((ip) => failure.ips.has(ip));
    });
  }

  /**
   * A failed request's cause in words a user can act on: what the connections showed while it
   * ran (`within`), or the client's error with the advice that fits the address when it timed out.
   */
  cause(error: unknown): string {
    if (error instanceof BrokerReachError) return error.message;
    const timedOut = kafkaErrorCode(error) === kafkaErrorCodes.timedOut;
    return `${describeKafkaError(error)}${timedOut ? brokerReachAdvice(this.brokers) : ''}`;
  }

  /** A connection failure librdkafka logged; one it has no words for replaces an older one. */
  private onFailure(message: string): void {
    const match = logLine.exec(message);
    if (match === null) return;
    const [, address = '', text = ''] = match;
    const failure = failureOf(text, this.failures.get(address));
    if (failure === undefined) this.failures.delete(address);
    else this.failures.set(address, failure);
  }

  /** Each address's last failure in words, the refused ones together with the reach advice. */
  private describeFailures(): string | null {
    const texts = new Set<string>();
    const refused: string[] = [];
    for (const [address, failure] of this.failures) {
      if (failure.kind === 'refused') refused.push(address);
      else texts.add(describeFailure(address, failure, this.protocol()));
    }
    if (refused.length > 0) texts.add(`connection refused at ${refused.join(', ')}${brokerReachAdvice(this.brokers)}`);
    return texts.size === 0 ? null : [...texts].join('; ');
  }

  private resolve(address: string): void {
    const { host } = splitHostPort(address);
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    if (isIP(bare) !== 0) {
      this.resolved.set(address, new Set([bare]));
      return;
    }
    lookup(bare, { all: true }).then(
      (found) => this.resolved.set(address, new Set(found.map((f) => f.address))),
      () => {}, // librdkafka reports the name it cannot resolve itself
    );
  }

  private protocol(): string {
    return protocolOfProcess();
  }
}

/** The security.protocol every client of this process uses (--kafka-config), lowercase. */
function protocolOfProcess(): string {
  return (kafkaClientSettings().properties['security.protocol'] ?? 'plaintext').toLowerCase();
}

/** The failure a log line tells of, added to what the address showed before; undefined if none. */
function failureOf(text: string, before: Failure | undefined): Failure | undefined {
  const refused = refusedLine.exec(text);
  if (refused !== null) {
    const ips = before?.kind === 'refused' ? before.ips : new Set<string>();
    return { kind: 'refused', ips: ips.add(refused[1] ?? '') };
  }
  if (/Failed to resolve/.test(text)) return { kind: 'unresolvable' };
  if (plaintextListenerLine.test(text)) return { kind: 'plaintext-listener' };
  if (noSaslLine.test(text)) return { kind: 'no-sasl' };
  const closed = closedInHandshakeLine.exec(text);
  if (closed !== null && (closed[2] === 'APIVERSION_QUERY' || Number(closed[1]) <= closedInHandshakeMsMax)) {
    return { kind: 'closed-in-handshake' };
  }
  const handshake = handshakeLine.exec(text)?.[0];
  return handshake === undefined ? undefined : { kind: 'handshake', detail: handshake.trim() };
}

const settingsAt = '--kafka-config / AMENDS_KAFKA_CONFIG';

function describeFailure(address: string, failure: Exclude<Failure, { kind: 'refused' }>, protocol: string): string {
  switch (failure.kind) {
    case 'unresolvable':
      return `cannot resolve the broker address ${address}: check its host name and this host's DNS`;
    case 'plaintext-listener':
      return `the broker at ${address} answered the TLS handshake like a PLAINTEXT listener: use the cluster's TLS address, or security.protocol=${protocol === 'sasl_ssl' ? 'SASL_PLAINTEXT' : 'PLAINTEXT'} in ${settingsAt}`;
    case 'no-sasl':
      return `the broker at ${address} offers no SASL mechanism on this port (a PLAINTEXT or SSL listener): use the cluster's SASL address, or security.protocol=${protocol === 'sasl_ssl' ? 'SSL' : 'PLAINTEXT'} in ${settingsAt}`;
    case 'closed-in-handshake':
      return closedInHandshake(address, protocol);
    case 'handshake':
      return `${failure.detail}: check the SASL credentials and TLS settings of ${settingsAt}`;
  }
}

/** The heuristic's words: what the listener probably speaks, given what this client spoke. */
function closedInHandshake(address: string, protocol: string): string {
  const closed = `the broker at ${address} closed the connection during the handshake`;
  if (protocol === 'plaintext') {
    return `${closed}, as a TLS or SASL listener does to a plaintext client: set security.protocol (SSL, SASL_SSL or SASL_PLAINTEXT) and its ssl.* / sasl.* settings in ${settingsAt}`;
  }
  if (protocol === 'ssl') {
    return `${closed}, as a SASL_SSL listener does to a client without SASL: set security.protocol=SASL_SSL and sasl.* in ${settingsAt}`;
  }
  return `${closed} (security.protocol=${protocol.toUpperCase()}): does that port speak this protocol? check security.protocol in ${settingsAt}`;
}

/**
 * kafkajs (the topic-configuration reader) reaches the brokers over Node's sockets: the same
 * words for a refused, unresolvable or closing address as for librdkafka's.
 */
export function socketConnectCause(brokers: string, error: unknown): string {
  const message = errorMessage(error);
  const refused = /connect ECONNREFUSED (\S+)/.exec(message);
  if (refused !== null) return `connection refused at ${refused[1]}${brokerReachAdvice(brokers)}`;
  const unresolved = /getaddrinfo (?:ENOTFOUND|EAI_AGAIN) (\S+)/.exec(message);
  if (unresolved !== null)
    return `cannot resolve the broker address ${unresolved[1]}: check its host name and this host's DNS`;
  if (/^Closed connection$/.test(message)) return closedInHandshake(brokers, protocolOfProcess());
  return `${message}${brokerReachAdvice(brokers)}`;
}
