/**
 * The naive baseline (quality.md "Benchmarks"): the consumer a team writes first. The same
 * client (@confluentinc/kafka-javascript) polls batches of 500 with auto-commit on; each poll's
 * posts are summed per (item, location, day) and written with ONE multi-row upsert into its own
 * table, in autocommit mode. No evidence, no revision authority, no fencing, no outbox: a
 * correction is simply added again, a crash between poll and upsert loses or repeats a poll.
 *
 * Run as a child process by the harness:
 *   node dist/bench/naive-consumer.js '{"brokers":…,"topic":…,"group":…,"databaseUrl":…,"table":…}'
 * Prints one JSON line per committed upsert: {"records":N,"at":<epoch ms after COMMIT>}.
 */
import { RdKafka } from '@confluentinc/kafka-javascript';
import pg from 'pg';

interface NaiveOptions {
  brokers: string;
  topic: string;
  group: string;
  databaseUrl: string;
  table: string;
}

const pollSize = 500;
const options = JSON.parse(process.argv[2] ?? '{}') as NaiveOptions;
const db = new pg.Client({ connectionString: options.databaseUrl, application_name: 'amends bench naive' });
await db.connect();
const upsert = `
  INSERT INTO ${options.table} AS t (item, location, day, qty)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])
  ON CONFLICT (item, location, day) DO UPDATE SET qty = t.qty + EXCLUDED.qty`;

const consumer = new RdKafka.KafkaConsumer(
  {
    'bootstrap.servers': options.brokers,
    'group.id': options.group,
    'enable.auto.commit': true,
  },
  { 'auto.offset.reset': 'earliest' },
);
await new Promise<void>((resolve, reject) => consumer.connect({}, (error) => (error ? reject(error) : resolve())));
consumer.subscribe([options.topic]);
consumer.setDefaultConsumeTimeout(250);
(
  consumer as unknown as { setDefaultIsTimeoutOnlyForFirstMessage(b: boolean): void }
).setDefaultIsTimeoutOnlyForFirstMessage(true);

let stopping = false;
process.on('SIGTERM', () => {
  stopping = true;
});

while (!stopping) {
  const messages = await new Promise<RdKafka.Message[]>((resolve, reject) =>
    consumer.consume(pollSize, (error, batch) => (error ? reject(error) : resolve(batch))),
  );
  if (messages.length === 0) continue;
  const sums = new Map<string, { item: string; location: string; day: string; qty: number }>();
  for (const message of messages) {
    let value: { op?: unknown; item?: unknown; location?: unknown; day?: unknown; qty?: unknown };
    try {
      value = JSON.parse(message.value?.toString('utf8') ?? 'null');
    } catch {
      continue;
    }
    if (value?.op !== 'post' || typeof value.qty !== 'number') continue;
    const [item, location, day] = [String(value.item), String(value.location), String(value.day)];
    const key = `${item}\u0000${location}\u0000${day}`;
    const sum = sums.get(key) ?? { item, location, day, qty: 0 };
    sum.qty += value.qty;
    sums.set(key, sum);
  }
  const rows = [...sums.values()];
  if (rows.length > 0) {
    await db.query(upsert, [
      rows.map((r) => r.item),
      rows.map((r) => r.location),
      rows.map((r) => r.day),
      rows.map((r) => r.qty),
    ]);
  }
  process.stdout.write(`${JSON.stringify({ records: messages.length, at: Date.now() })}\n`);
}
await new Promise<void>((resolve) => consumer.disconnect(() => resolve()));
await db.end();
