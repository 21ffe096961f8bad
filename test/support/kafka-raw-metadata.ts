/**
 * Reads a topic's UUID and partition count with a hand-built Kafka Metadata v12 request
 * over a plain TCP socket: an independent check of what amends' librdkafka adapter reports
 * (no client library in between). Protocol: https://kafka.apache.org/protocol#The_Messages_Metadata
 * (v12: flexible version, request header v2, response header v1, compact strings/arrays).
 */
import { Socket } from 'node:net';

const metadataApiKey = 3;
const metadataVersion = 12;
const requestTimeoutMs = 5_000;

export interface RawTopicMetadata {
  errorCode: number;
  /** The 16 UUID bytes as 32 lowercase hex digits. */
  topicIdHex: string;
  partitions: number;
}

function uvarint(n: number): Buffer {
  const bytes: number[] = [];
  let v = n;
  while (v >= 0x80) {
    bytes.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  bytes.push(v);
  return Buffer.from(bytes);
}

function encodeRequest(topic: string, correlationId: number): Buffer {
  const clientId = Buffer.from('amends-test-raw-metadata', 'utf8');
  const name = Buffer.from(topic, 'utf8');
  const header = Buffer.alloc(10);
  header.writeInt16BE(metadataApiKey, 0);
  header.writeInt16BE(metadataVersion, 2);
  header.writeInt32BE(correlationId, 4);
  header.writeInt16BE(clientId.length, 8);
  const body = Buffer.concat([
    header,
    clientId,
    uvarint(0), // request header tagged fields
    uvarint(1 + 1), // topics: compact array of one
    Buffer.alloc(16), // topic_id: zero, look up by name
    uvarint(name.length + 1),
    name,
    uvarint(0), // topic tagged fields
    Buffer.from([0]), // allow_auto_topic_creation = false
    Buffer.from([0]), // include_topic_authorized_operations = false
    uvarint(0), // body tagged fields
  ]);
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length, 0);
  return Buffer.concat([size, body]);
}

class Reader {
  constructor(
    private readonly buf: Buffer,
    private pos = 0,
  ) {}
  int8(): number {
    return this.buf.readInt8(this.pos++);
  }
  int16(): number {
    const v = this.buf.readInt16BE(this.pos);
    this.pos += 2;
    return v;
  }
  int32(): number {
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  uvarint(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = this.buf.readUInt8(this.pos++);
      result |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result >>> 0;
      shift += 7;
    }
  }
  bytes(n: number): Buffer {
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }
  compactString(): string | null {
    const n = this.uvarint();
    return n === 0 ? null : this.bytes(n - 1).toString('utf8');
  }
  skipTaggedFields(): void {
    const count = this.uvarint();
    for (let i = 0; i < count; i++) {
      this.uvarint();
      this.bytes(this.uvarint());
    }
  }
  compactArray<T>(item: () => T): T[] {
    const n = this.uvarint();
    const out: T[] = [];
    for (let i = 0; i < n - 1; i++) out.push(item());
    return out;
  }
}

function decodeResponse(frame: Buffer, correlationId: number, topic: string): RawTopicMetadata {
  const r = new Reader(frame);
  if (r.int32() !== correlationId) throw new Error('raw metadata: correlation id mismatch');
  r.skipTaggedFields(); // response header v1
  r.int32(); // throttle_time_ms
  r.compactArray(() => {
    r.int32();
    r.compactString();
    r.int32();
    r.compactString();
    r.skipTaggedFields();
  });
  r.compactString(); // cluster_id
  r.int32(); // controller_id
  const topics = r.compactArray(() => {
    const errorCode = r.int16();
    const name = r.compactString();
    const topicIdHex = r.bytes(16).toString('hex');
    r.int8(); // is_internal
    const partitions = r.compactArray(() => {
      r.int16();
      r.int32();
      r.int32();
      r.int32();
      r.compactArray(() => r.int32());
      r.compactArray(() => r.int32());
      r.compactArray(() => r.int32());
      r.skipTaggedFields();
    }).length;
    r.int32(); // topic_authorized_operations
    r.skipTaggedFields();
    return { name, errorCode, topicIdHex, partitions };
  });
  const found = topics.find((t) => t.name === topic);
  if (!found) throw new Error(`raw metadata: topic ${topic} missing from the response`);
  return { errorCode: found.errorCode, topicIdHex: found.topicIdHex, partitions: found.partitions };
}

/** One Metadata v12 round trip to the first bootstrap broker. */
export function rawTopicMetadata(brokers: string, topic: string): Promise<RawTopicMetadata> {
  const first = brokers.split(',')[0]!.trim();
  const host = first.slice(0, first.lastIndexOf(':'));
  const port = Number(first.slice(first.lastIndexOf(':') + 1));
  const correlationId = 4242;
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let received = Buffer.alloc(0);
    const fail = (error: Error) => {
      socket.destroy();
      reject(error);
    };
    socket.setTimeout(requestTimeoutMs, () => fail(new Error(`raw metadata: no answer from ${first}`)));
    socket.once('error', fail);
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 4) return;
      const size = received.readInt32BE(0);
      if (received.length < 4 + size) return;
      socket.destroy();
      try {
        resolve(decodeResponse(received.subarray(4, 4 + size), correlationId, topic));
      } catch (error) {
        reject(error as Error);
      }
    });
    socket.connect(port, host, () => socket.write(encodeRequest(topic, correlationId)));
  });
}
