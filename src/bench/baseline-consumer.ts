/**
 * A reference consumer of the bench (docs/design.md#benchmarks), one process of two in a fresh
 * group: the same client (@confluentinc/kafka-javascript) polling batches of 500 from the same
 * backlog, each poll written by baseline-writes.ts as one statement in autocommit mode.
 *
 * - `naive` keeps auto-commit on, as the consumer a team writes first does;
 * - `floor` and `connect` commit the consumed offsets to the group after the database committed
 *   the poll (at least once, as Kafka Connect's sink does). No evidence, fencing or outbox.
 *
 * Run as a child process by the harness:
 *   node dist/bench/baseline-consumer.js '{"kind":…,"brokers":…,"topic":…,"group":…,"databaseUrl":…,"prefix":…}'
 * Prints one JSON line per committed poll: {"records":N,"at":<epoch ms after COMMIT>}.
 */
import { RdKafka } from '@confluentinc/kafka-javascript';
import pg from 'pg';
import { waitForFirstRecordOnly } from '../io/kafka/rdkafka-consumer-shim.js';
import { type BaselineKind, type PolledRecord, writePoll } from './baseline-writes.js';

interface BaselineOptions {
  kind: BaselineKind;
  brokers: string;
  topic: string;
  group: string;
  databaseUrl: string;
  prefix: string;
}

const baselinePollSize = 500;
const pollWaitMs = 250;
const options = JSON.parse(process.argv[2] ?? '{}') as BaselineOptions;
const db = new pg.Client({ connectionString: options.databaseUrl, application_name: `amends bench ${options.kind}` });
await db.connect();

const consumer = new RdKafka.KafkaConsumer(
  {
    'bootstrap.servers': options.brokers,
    'group.id': options.group,
    'enable.auto.commit': options.kind === 'naive',
  },
  { 'auto.offset.reset': 'earliest' },
);
await new Promise<void>((resolve, reject) => consumer.connect({}, (error) => (error ? reject(error) : resolve())));
consumer.subscribe([options.topic]);
consumer.setDefaultConsumeTimeout(pollWaitMs);
waitForFirstRecordOnly(consumer);

let stopping = false;
process.on('SIGTERM', () => {
  stopping = true;
});

while (!stopping) {
  const messages = await new Promise<RdKafka.Message[]>((resolve, reject) =>
    consumer.consume(baselinePollSize, (error, batch) => (error ? reject(error) : resolve(batch))),
  );
  if (messages.length === 0) continue;
  const records: PolledRecord[] = messages.map((m) => ({
    partition: m.partition,
    offset: m.offset,
    key: m.key === undefined || m.key === null ? null : Buffer.from(m.key),
    value: m.value ?? null,
  }));
  await writePoll(db, options.kind, options.prefix, records);
  // After the database commit: the consumed positions (stored as each record was consumed).
  if (options.kind !== 'naive') consumer.commit();
  process.stdout.write(`${JSON.stringify({ records: messages.length, at: Date.now() })}\n`);
}
await new Promise<void>((resolve) => consumer.disconnect(() => resolve()));
await db.end();
