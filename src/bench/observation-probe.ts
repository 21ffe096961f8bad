/**
 * What one post-poll source observation costs (docs/design.md#source-validation: topic metadata, effective
 * configuration, retained start and read-committed end, after every non-empty poll): the
 * worker's own observer, timed against the backlog topic. At batch size 1 it is paid per record.
 */
import type { Manifest } from '../domain/config.js';
import { KafkaSourceObserver } from '../io/kafka/kafka-source-observer.js';

export interface ObservationCost {
  observations: number;
  p50_ms: number;
  mean_ms: number;
}

export async function measureObservation(brokers: string, manifest: Manifest, count: number): Promise<ObservationCost> {
  const observer = await KafkaSourceObserver.open({
    brokers,
    topic: manifest.source_topic,
    incarnation: manifest.config.source_incarnation,
    partitions: manifest.config.partitions,
    clientId: 'amends-bench-observation',
  });
  const never = new AbortController().signal;
  try {
    await observer.observe([0], never); // connections warm, as in a running worker
    const times: number[] = [];
    for (let i = 0; i < count; i++) {
      const started = process.hrtime.bigint();
      const observation = await observer.observe([0], never);
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (!observation.valid) throw new Error(`the backlog topic is not a valid source: ${observation.detail}`);
    }
    times.sort((a, b) => a - b);
    return {
      observations: count,
      p50_ms: times[Math.floor(count / 2)] ?? Number.NaN,
      mean_ms: times.reduce((a, b) => a + b, 0) / count,
    };
  } finally {
    await observer.close();
  }
}
