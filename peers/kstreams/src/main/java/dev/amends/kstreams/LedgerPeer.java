package dev.amends.kstreams;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.state.Stores;

/**
 * The Kafka Streams peer of amends' benchmark: reads the source topic of an amends manifest (raw
 * bytes), decides every record and writes each new output version to an output topic, exactly once
 * (exactly_once_v2: output, changelogs and source offsets in one transaction).
 *
 * <pre>
 * java -cp 'DIR/peer.jar:DIR/lib/*' dev.amends.kstreams.LedgerPeer --brokers HOST:PORT
 *   --manifest M --application-id ID --output-topic T --threads N
 *   [--state-dir DIR] [--decisions-topic T]
 * </pre>
 *
 * The output topic must exist with the source's partition count. Prints one JSON line per state
 * change on stdout ({"state":"RUNNING"}); stops on SIGTERM. A usage or manifest problem is one line
 * on stderr and exit 2; a stream thread that dies stops the peer with exit 1.
 */
public final class LedgerPeer {
  private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(20);

  private LedgerPeer() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> flags;
    LedgerConfig config;
    try {
      flags = parseFlags(args);
      config = LedgerConfig.read(Path.of(required(flags, "manifest")));
      for (String name : new String[] {"brokers", "application-id", "output-topic", "threads"})
        required(flags, name);
    } catch (IllegalArgumentException e) {
      System.err.println("kstreams-peer: " + e.getMessage());
      System.exit(2);
      return;
    }
    String decisionsTopic = flags.get("decisions-topic");
    KafkaStreams streams =
        new KafkaStreams(
            topology(config, flags.get("output-topic"), decisionsTopic), properties(flags));
    CountDownLatch stopped = new CountDownLatch(1);
    int[] exitCode = {0};
    streams.setUncaughtExceptionHandler(
        error -> {
          System.err.println("kstreams-peer: a stream thread failed: " + error);
          exitCode[0] = 1;
          return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
    streams.setStateListener(
        (next, previous) -> {
          System.out.println("{\"state\":\"" + next + "\"}");
          if (next == KafkaStreams.State.ERROR || next == KafkaStreams.State.NOT_RUNNING)
            stopped.countDown();
        });
    Runtime.getRuntime()
        .addShutdownHook(new Thread(() -> streams.close(CLOSE_TIMEOUT), "kstreams-peer-stop"));
    streams.start();
    stopped.await();
    streams.close(CLOSE_TIMEOUT);
    System.exit(exitCode[0]);
  }

  static Topology topology(LedgerConfig config, String outputTopic, String decisionsTopic) {
    Topology t = new Topology();
    // Raw bytes in: validation is the processor's (a deserializer that throws would stop the task).
    t.addSource(
        "source", new ByteArrayDeserializer(), new ByteArrayDeserializer(), config.sourceTopic);
    t.addProcessor("ledger", () -> new LedgerProcessor(config, decisionsTopic != null), "source");
    for (String store :
        new String[] {LedgerProcessor.AUTHORITY_STORE, LedgerProcessor.DAYS_STORE}) {
      t.addStateStore(
          Stores.keyValueStoreBuilder(
                  Stores.persistentKeyValueStore(store), Serdes.Bytes(), Serdes.ByteArray())
              .withCachingEnabled(),
          "ledger");
    }
    t.addSink(
        LedgerProcessor.VERSIONS_SINK,
        outputTopic,
        new Routed.KeySerializer(),
        new StringSerializer(),
        new Routed.Partitioner(),
        "ledger");
    if (decisionsTopic != null) {
      t.addSink(
          LedgerProcessor.DECISIONS_SINK,
          decisionsTopic,
          new Routed.KeySerializer(),
          new StringSerializer(),
          new Routed.Partitioner(),
          "ledger");
    }
    return t;
  }

  private static Properties properties(Map<String, String> flags) {
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, flags.get("application-id"));
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, flags.get("brokers"));
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, positive(flags.get("threads"), "--threads"));
    if (flags.containsKey("state-dir"))
      p.put(StreamsConfig.STATE_DIR_CONFIG, flags.get("state-dir"));
    return p;
  }

  private static Map<String, String> parseFlags(String[] args) {
    Map<String, String> flags = new HashMap<>();
    for (int i = 0; i < args.length; i += 2) {
      String name = args[i];
      if (!name.startsWith("--") || i + 1 >= args.length)
        throw new IllegalArgumentException("expected --NAME VALUE pairs, got " + name);
      flags.put(name.substring(2), args[i + 1]);
    }
    return flags;
  }

  private static String required(Map<String, String> flags, String name) {
    String value = flags.get(name);
    if (value == null) throw new IllegalArgumentException("--" + name + " is required");
    return value;
  }

  private static int positive(String text, String what) {
    try {
      int n = Integer.parseInt(text);
      if (n >= 1) return n;
    } catch (NumberFormatException e) {
      // said below
    }
    throw new IllegalArgumentException(what + " must be a positive integer, got " + text);
  }
}
