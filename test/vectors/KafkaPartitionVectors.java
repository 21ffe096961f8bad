// Prints Kafka's own murmur2 and default-partitioner partition for canonical stock keys, the
// source of the canonical-key vectors in test/unit/murmur2.test.ts. Run with the stack's jars:
//   java -cp "$HOME/.cache/amends/kafka-*/lib/*" test/vectors/KafkaPartitionVectors.java
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.utils.Utils;

public class KafkaPartitionVectors {
    public static void main(String[] args) {
        String[] keys = {
            "{\"item\":\"widget\",\"location\":\"berlin\"}",
            "{\"item\":\"gadget\",\"location\":\"paris\"}",
            "{\"item\":\"bolt \u2713\",\"location\":\"wien\"}",
            "{\"item\":\"item-07\",\"location\":\"loc-2\"}",
            "",
            "a",
            "ab",
        };
        for (String key : keys) {
            byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
            int h = Utils.murmur2(bytes);
            // BuiltInPartitioner.partitionForKey: toPositive(murmur2(serializedKey)) % numPartitions
            System.out.printf("%s\t%d\t%d\t%d%n", key, h, Utils.toPositive(h) % 3, Utils.toPositive(h) % 7);
        }
    }
}
