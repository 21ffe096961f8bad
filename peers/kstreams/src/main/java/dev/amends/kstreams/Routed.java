package dev.amends.kstreams;

import java.util.Optional;
import java.util.Set;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.processor.StreamPartitioner;

/**
 * An output record's key with the partition it must go to: the source partition its stock key maps
 * to (amends' output topic has the source's partition count and routes by stock key, not by a hash
 * of the (day, item, location) key). {@code text} is null for a keyless record.
 */
record Routed(int partition, String text) {
  static final class KeySerializer implements Serializer<Routed> {
    @Override
    public byte[] serialize(String topic, Routed key) {
      return key == null || key.text() == null
          ? null
          : key.text().getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
  }

  static final class Partitioner implements StreamPartitioner<Routed, String> {
    @Override
    public Optional<Set<Integer>> partitions(
        String topic, Routed key, String value, int numPartitions) {
      return Optional.of(Set.of(key.partition()));
    }
  }
}
