/**
 * Which client errors are outages, decided in the rooms that wrap the clients (issue 31):
 * PostgreSQL's and Node's sockets' in src/io/store/pg-errors.ts, librdkafka's and kafkajs's in
 * src/io/kafka/kafka-errors.ts; their wrappers set `outage` and keep the client's error as the
 * cause; and the riders' composition (src/cli/dependency-outage.ts) recognises exactly what the
 * kernel's one list recognised before, kept below as the reference.
 */
import { describe, expect, it } from 'vitest';
import { isDependencyOutage } from '../../src/cli/dependency-outage.js';
import { isBrokerOutage, isKafkaOutage, kafkaError } from '../../src/io/kafka/kafka-errors.js';
import { isPgOutage, isStoreOutage, storeError } from '../../src/io/store/pg-errors.js';
import { operationalError } from '../../src/kernel/amends-error.js';

const pgError = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});
/** librdkafka's errors carry numeric codes. */
const rdkafkaError = (message: string, code: number) => Object.assign(new Error(message), { code });

const pgOutages: [string, unknown][] = [
  ['a refused connect', pgError('connect ECONNREFUSED 127.0.0.1:15432', 'ECONNREFUSED')],
  ['an unresolved host', pgError('getaddrinfo ENOTFOUND db', 'ENOTFOUND')],
  ['a reset socket', pgError('read ECONNRESET', 'ECONNRESET')],
  ['a write into a closed socket', pgError('write EPIPE', 'EPIPE')],
  ['an administrator restart (57P01)', pgError('terminating connection due to administrator command', '57P01')],
  ['a crash shutdown (57P02)', pgError('x', '57P02')],
  ['a server starting up (57P03)', pgError('the database system is starting up', '57P03')],
  ['a connection exception (08006)', pgError('connection failure', '08006')],
  ['no connection slot left (53300)', pgError('sorry, too many clients already', '53300')],
  ['a cut connection', new Error('Connection terminated unexpectedly')],
  ["pg's connect timeout", new Error('timeout expired')],
  ['a server in recovery', new Error('the database system is in recovery mode')],
  ['a lost role lock', operationalError("the relay lock's database session ended; another relay may be active now")],
];
/** Outages added after the composition's reference below was frozen: judged here, not against it. */
const pgOutagesSinceReference: [string, unknown][] = [
  [
    'a read-only transaction during a failover (25006)',
    pgError('cannot execute INSERT in a read-only transaction', '25006'),
  ],
];
const pgRefusals: [string, unknown][] = [
  ['a unique violation (23505)', pgError('duplicate key value violates unique constraint', '23505')],
  ['a refused commit (P0001)', pgError('amends-test rejects this commit', 'P0001')],
  ['a serialization failure (40001)', pgError('could not serialize access', '40001')],
  ['a statement timeout (57014)', pgError('canceling statement due to statement timeout', '57014')],
  ['a syntax error (42601)', pgError('syntax error at or near "SELEC"', '42601')],
  ['a lost producer guard', operationalError("the guard's database session ended")],
];
const kafkaOutages: [string, unknown][] = [
  ['a timed-out request', rdkafkaError('Local: Timed out', -185)],
  ['no broker reachable', rdkafkaError('Local: Broker transport failure', -195)],
  ['all brokers down', rdkafkaError('Local: All broker connections are down', -187)],
  ['a destroyed handle', rdkafkaError('Local: Broker handle destroyed', -197)],
  ['a broker-side timeout', rdkafkaError('Broker: Request timed out', 7)],
  ['a leader election', rdkafkaError('Broker: Leader not available', 5)],
  ['a moved leader', rdkafkaError('Broker: Not leader for partition', 6)],
  ['a fenced leader epoch', rdkafkaError('Broker: Fenced leader epoch', 74)],
  ['an unripe high watermark', rdkafkaError('Broker: Leader high watermark is not caught up', 78)],
  ['a moving coordinator', rdkafkaError('Broker: Coordinator not available', 15)],
  ['too few in-sync replicas', rdkafkaError('Broker: Not enough in-sync replicas', 19)],
  [
    "kafkajs's leader election",
    new Error('There is no leader for this topic-partition as we are in the middle of a leadership election'),
  ],
  ["kafkajs's moved leader", new Error('This server is not the leader for that topic-partition')],
  ["kafkajs's dying broker", new Error('The server disconnected before a response was received')],
  [
    "kafkajs's refused socket",
    Object.assign(new Error('Connection error: connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
  ],
  [
    'ListOffsets without a known leader (-156)',
    operationalError('cannot list the log-start offsets of topic t on brokers b: Local: No such entry (code -156)'),
  ],
];
const kafkaRefusals: [string, unknown][] = [
  ['an unknown topic', rdkafkaError('Broker: Unknown topic or partition', 3)],
  ['a topic that exists', rdkafkaError('Broker: Topic already exists', 36)],
  ['a denied topic', rdkafkaError('Broker: Topic authorization failed', 29)],
  ['a record too large', rdkafkaError('Broker: Message size too large', 10)],
  ['an offset out of range', rdkafkaError('Local: No offset stored', -168)],
  ['a missing entry outside ListOffsets', rdkafkaError('Local: No such entry', -156)],
  ['a recreated topic', operationalError('output topic X has UUID a, the binding says b')],
];

describe('the store room (pg-errors.ts)', () => {
  it.each([...pgOutages, ...pgOutagesSinceReference])('%s is an outage', (_, error) => {
    expect(isPgOutage(error)).toBe(true);
    expect(isStoreOutage(operationalError('reading failed', error))).toBe(true);
  });
  it.each(pgRefusals)('%s is not', (_, error) => {
    expect(isPgOutage(error)).toBe(false);
    expect(isStoreOutage(operationalError('reading failed', error))).toBe(false);
  });

  it('wraps a client error: the message given, the client error as cause, outage decided', () => {
    const cause = pgError('terminating connection due to administrator command', '57P01');
    const wrapped = storeError('database x: reading failed', cause);
    expect(wrapped.message).toBe('database x: reading failed');
    expect(wrapped.cause).toBe(cause);
    expect(wrapped.code).toBe('operational');
    expect(wrapped.outage).toBe(true);
    expect(storeError('database x: reading failed', pgError('refused', 'P0001')).outage).toBe(false);
    expect(storeError('cannot reach the database at x (refused): start it', undefined).outage).toBe(true);
    expect(storeError('failed', undefined, 'start it').nextStep).toBe('start it');
  });
});

describe('the Kafka room (kafka-errors.ts)', () => {
  it.each(kafkaOutages)('%s is an outage', (_, error) => {
    expect(isKafkaOutage(error)).toBe(true);
    expect(isBrokerOutage(operationalError('describing failed', error))).toBe(true);
  });
  it.each(kafkaRefusals)('%s is not', (_, error) => {
    expect(isKafkaOutage(error)).toBe(false);
    expect(isBrokerOutage(operationalError('describing failed', error))).toBe(false);
  });

  it('wraps a client error: the message given, the client error as cause, outage decided', () => {
    const cause = rdkafkaError('Local: Timed out', -185);
    const wrapped = kafkaError('cannot describe topic t on brokers b: Local: Timed out (code -185)', cause);
    expect(wrapped.cause).toBe(cause);
    expect(wrapped.outage).toBe(true);
    expect(kafkaError('cannot describe topic t: Broker: Topic authorization failed (code 29)').outage).toBe(false);
    expect(
      kafkaError('cannot list the offset of t[0]: the broker answered -1001 (no leader answered for it)').outage,
    ).toBe(true);
  });
});

/** The kernel's list before issue 31, verbatim: the reference the composition must equal. */
function formerIsOutageError(error: unknown): boolean {
  const codes = [
    /^(08...|57P01|57P02|57P03|53300)$/,
    /^(ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|ECONNRESET|EAI_AGAIN)$/,
    /^EPIPE$/,
  ];
  const unreachable = /timeout expired|Connection terminated|connect ECONN/i;
  const outage = new RegExp(
    [
      'terminating connection',
      'the database system is (starting up|shutting down|in recovery mode)',
      "lock's database session (failed|ended)",
      'cannot reach the database',
      'Broker transport failure',
      'All broker connections are down',
      'Local: Timed out',
      'Local: Broker handle destroyed',
      'Broker: Request timed out',
      'leader not available|not leader|no leader answered|leader epoch',
      'high watermark is not caught up',
      'no leader for this topic-partition|not the leader for that topic-partition',
      'server disconnected before a response was received',
      'replica not available|not enough in-sync replicas',
      'offsets? of topic .*Local: No such entry',
      'coordinator load in progress|coordinator not available|not coordinator',
    ].join('|'),
    'i',
  );
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    const { code, message, cause } = e as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === 'string' && codes.some((r) => r.test(code))) return true;
    if (typeof message === 'string' && (unreachable.test(message) || outage.test(message))) return true;
    e = cause;
  }
  return false;
}

describe("the riders' composition (dependency-outage.ts)", () => {
  const all = [...pgOutages, ...pgRefusals, ...kafkaOutages, ...kafkaRefusals];
  it.each(all)('%s: the same verdict as before, raw, wrapped, or wrapped by a room', (_, error) => {
    const message = (error as Error).message;
    for (const e of [
      error,
      operationalError('doing failed', error),
      storeError(`database x: ${message}`, error),
      kafkaError(`cannot describe topic t: ${message}`, error),
    ]) {
      expect(isDependencyOutage(e)).toBe(formerIsOutageError(e));
    }
  });
});
