package dev.amends.kstreams;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.utils.Utils;

/**
 * The namespace configuration of an amends manifest (amends' src/domain/config.ts and
 * stock-key-terms.ts), read from the manifest file amends wrote: version 1 (every key listed with
 * its partition) and version 2 (the same table, or Kafka's murmur2 partitioner over the key's
 * canonical bytes with an optional default rule). The manifest was validated by amends when it was
 * made; this reads what it needs and stops at the first thing it lacks.
 *
 * <p>A manifest with configuration revisions is refused: the peer decides every record under one
 * configuration (docs/benchmarks.md names the difference).
 */
final class LedgerConfig {
  /** A stock key's terms: where its records belong and what its balances start from. */
  record Terms(String item, String location, int partition, long opening, long threshold) {}

  record Rule(long opening, long threshold) {}

  final String sourceTopic;
  final String namespace;
  final String ledgerOrigin;
  final int partitions;
  private final boolean murmur2;
  private final Rule defaultRule;
  private final Map<String, Terms> listed = new HashMap<>();

  private LedgerConfig(String sourceTopic, Map<String, StrictJson.Node> config) {
    this.sourceTopic = sourceTopic;
    this.namespace = string(config, "namespace");
    this.ledgerOrigin = string(config, "ledger_origin");
    this.partitions = (int) integer(config, "partitions");
    long version = integer(config, "schema_version");
    this.murmur2 = version == 2 && string(config, "partitioner").equals("murmur2");
    StrictJson.Node rule = config.get("default_stock_key");
    this.defaultRule =
        rule instanceof StrictJson.Obj r
            ? new Rule(integer(r.members(), "opening"), integer(r.members(), "threshold"))
            : null;
    if (!(config.get("stock_keys") instanceof StrictJson.Arr keys))
      throw invalid("config.stock_keys is missing");
    for (StrictJson.Node node : keys.items()) {
      if (!(node instanceof StrictJson.Obj k))
        throw invalid("a config.stock_keys entry is not an object");
      Map<String, StrictJson.Node> m = k.members();
      String item = string(m, "item");
      String location = string(m, "location");
      int partition = murmur2 ? murmur2Partition(item, location) : (int) integer(m, "partition");
      listed.put(
          id(item, location),
          new Terms(item, location, partition, integer(m, "opening"), integer(m, "threshold")));
    }
  }

  static LedgerConfig read(Path manifestPath) throws java.io.IOException {
    byte[] bytes = Files.readAllBytes(manifestPath);
    StrictJson.Node root;
    try {
      root = new StrictJson().decode(bytes);
    } catch (StrictJson.Malformed e) {
      throw invalid("not strict JSON: " + e.getMessage());
    }
    if (!(root instanceof StrictJson.Obj manifest)) throw invalid("not a JSON object");
    Map<String, StrictJson.Node> m = manifest.members();
    if (m.get("revisions") instanceof StrictJson.Arr revisions && !revisions.items().isEmpty()) {
      throw invalid("it carries configuration revisions; the peer decides under one configuration");
    }
    if (!(m.get("config") instanceof StrictJson.Obj config)) throw invalid("config is missing");
    return new LedgerConfig(string(m, "source_topic"), config.members());
  }

  /** The stock key's terms, or null when (item, location) is not a stock key. */
  Terms terms(String item, String location) {
    Terms terms = listed.get(id(item, location));
    if (terms != null || !murmur2 || defaultRule == null) return terms;
    // The envelope's rules already hold for item and location: the default rule covers them.
    return new Terms(
        item,
        location,
        murmur2Partition(item, location),
        defaultRule.opening(),
        defaultRule.threshold());
  }

  /** Kafka's default partitioner over the canonical key bytes, never the record's own key bytes. */
  private int murmur2Partition(String item, String location) {
    byte[] key = JsonText.canonicalKey(item, location).getBytes(StandardCharsets.UTF_8);
    return Utils.toPositive(Utils.murmur2(key)) % partitions;
  }

  /** Item and location hold no control character (text rules), so U+0000 cannot occur in either. */
  private static String id(String item, String location) {
    return item + '\u0000' + location;
  }

  private static String string(Map<String, StrictJson.Node> m, String name) {
    if (m.get(name) instanceof StrictJson.Str s) return s.value();
    throw invalid(name + " is missing or not a string");
  }

  private static long integer(Map<String, StrictJson.Node> m, String name) {
    if (m.get(name) instanceof StrictJson.Num n) return Long.parseLong(n.lexeme());
    throw invalid(name + " is missing or not an integer");
  }

  private static IllegalArgumentException invalid(String what) {
    return new IllegalArgumentException("the manifest cannot be used: " + what);
  }
}
