/**
 * The largest source record a topic and amends' producer both accept, so source-load can
 * refuse an oversized line *before* publishing anything (docs/design.md#commands: any invalid line, nothing
 * published). Without it, lines before an oversized one are published and the load then
 * fails half-way.
 *
 * Sizes are librdkafka's and Kafka's framing of a v2 record, taken at their worst case so a
 * record that passes can never be refused for its size:
 * - librdkafka refuses to queue a record when key + value + 36 bytes of worst-case record
 *   framing exceed the producer's `message.max.bytes` (rd_kafka_msg_max_wire_size,
 *   RD_KAFKAP_MESSAGE_V2_MAX_OVERHEAD in rdkafka_proto.h, 1.10.1's bundled librdkafka);
 * - the broker refuses a record batch larger than the topic's effective `max.message.bytes`;
 *   a batch of one record is its 61-byte header plus the record. Batches of several records
 *   stay within the producer's `batch.size`, which source-load sets to the topic's limit
 *   (rd_kafka_msgset_writer_write_msgq adds a record only while the batch stays within it).
 */
import { invalidInput, operationalError } from '../../kernel/amends-error.js';
import { describeTopicConfig } from './topic-config.js';

/** Worst-case v2 record framing: length 5, attributes 1, timestamp delta 10, offset delta 5, key length 5, value length 5, header count 5. */
export const recordFramingMaxBytes = 36;
/** The v2 record batch header (Kafka's DefaultRecordBatch.RECORD_BATCH_OVERHEAD). */
export const recordBatchHeaderBytes = 61;
/** librdkafka's default `message.max.bytes`, set explicitly on every amends producer. */
export const producerMessageMaxBytes = 1_000_000;

export interface RecordSizeLimit {
  /** The most key + value bytes one record may carry. */
  payloadMaxBytes: number;
  /** What sets it, for the diagnostic. */
  setBy: string;
  /** The producer's `batch.size` that keeps every batch within the topic's limit. */
  batchSizeBytes: number;
}

/** The limit for a topic whose effective `max.message.bytes` is `topicMaxBytes`. */
export function recordSizeLimit(topic: string, topicMaxBytes: number): RecordSizeLimit {
  const byTopic = topicMaxBytes - recordBatchHeaderBytes - recordFramingMaxBytes;
  const byProducer = producerMessageMaxBytes - recordFramingMaxBytes;
  const batchSizeBytes = Math.min(producerMessageMaxBytes, topicMaxBytes);
  if (byTopic <= byProducer) {
    return {
      payloadMaxBytes: byTopic,
      setBy: `topic ${topic}'s max.message.bytes ${topicMaxBytes} less ${recordBatchHeaderBytes + recordFramingMaxBytes} bytes of record framing`,
      batchSizeBytes,
    };
  }
  return {
    payloadMaxBytes: byProducer,
    setBy: `the producer's message.max.bytes ${producerMessageMaxBytes} less ${recordFramingMaxBytes} bytes of record framing`,
    batchSizeBytes,
  };
}

export interface SizedRecord {
  line: number;
  key: Uint8Array;
  value: Uint8Array;
}

/** Throws naming the first line (file order) whose record exceeds the limit. */
export function refuseOversizedRecords(records: readonly SizedRecord[], limit: RecordSizeLimit): void {
  for (const record of records) {
    const bytes = record.key.byteLength + record.value.byteLength;
    if (bytes > limit.payloadMaxBytes) {
      throw invalidInput(
        `line ${record.line}: the encoded record is ${bytes} bytes (key ${record.key.byteLength}, value ${record.value.byteLength}), more than the ${limit.payloadMaxBytes} bytes a record may have (${limit.setBy}): nothing was published`,
      );
    }
  }
}

/** Reads the topic's effective `max.message.bytes` (DescribeConfigs) and returns its limit. */
export async function readRecordSizeLimit(brokers: string, topic: string): Promise<RecordSizeLimit> {
  const config = await describeTopicConfig(brokers, topic, ['max.message.bytes']);
  const value = config['max.message.bytes'];
  const topicMaxBytes = value === null || value === undefined ? Number.NaN : Number(value);
  if (!Number.isSafeInteger(topicMaxBytes) || topicMaxBytes <= recordBatchHeaderBytes + recordFramingMaxBytes) {
    throw operationalError(
      `topic ${topic} reports max.message.bytes ${JSON.stringify(value)}, not a usable record size limit: nothing was published`,
    );
  }
  return recordSizeLimit(topic, topicMaxBytes);
}
