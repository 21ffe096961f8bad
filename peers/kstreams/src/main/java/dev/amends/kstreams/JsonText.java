package dev.amends.kstreams;

/**
 * The JSON the peer writes, byte for byte what amends writes (src/domain/export-lines.ts): the
 * output topic's canonical key and value (RFC 8785 member order) and the export line of a decision.
 * Strings are escaped as JavaScript's JSON.stringify escapes them.
 */
final class JsonText {
  private JsonText() {}

  /** {@code {"item":…,"location":…}}: the bytes Kafka's partitioner hashes under murmur2. */
  static String canonicalKey(String item, String location) {
    StringBuilder b = new StringBuilder(48);
    b.append("{\"item\":");
    quote(b, item);
    b.append(",\"location\":");
    quote(b, location);
    return b.append('}').toString();
  }

  /** The output record's key: {@code {"day":…,"item":…,"location":…}}. */
  static String versionKey(OutputVersion v) {
    StringBuilder b = new StringBuilder(64).append('{');
    return dayItemLocation(b, v).append('}').toString();
  }

  /** {@code "day":…,"item":…,"location":…}: the key's members, also in the envelope's order. */
  private static StringBuilder dayItemLocation(StringBuilder b, OutputVersion v) {
    b.append("\"day\":");
    quote(b, v.day());
    b.append(",\"item\":");
    quote(b, v.item());
    b.append(",\"location\":");
    quote(b, v.location());
    return b;
  }

  /** The output envelope (amends' outputRecordValue), with the namespace it was derived for. */
  static String versionValue(OutputVersion v, String namespace) {
    StringBuilder b = new StringBuilder(200);
    b.append("{\"cause\":{\"offset\":").append(v.causeOffset());
    b.append(",\"partition\":").append(v.causePartition());
    b.append("},\"closing\":").append(v.retracted() ? "null" : Long.toString(v.closing()));
    dayItemLocation(b.append(','), v).append(",\"namespace\":");
    quote(b, namespace);
    b.append(",\"retracted\":").append(v.retracted());
    b.append(",\"schema\":1,\"status\":");
    if (v.retracted()) b.append("null");
    else quote(b, v.status());
    return b.append(",\"version\":").append(v.version()).append('}').toString();
  }

  /**
   * amends' decision export line: {@code
   * {"type":"decision","partition":…,"offset":…,"outcome":…,…}}.
   */
  static String decisionLine(int partition, long offset, Outcome outcome, Envelope e) {
    StringBuilder b = new StringBuilder(160);
    b.append("{\"type\":\"decision\",\"partition\":").append(partition);
    b.append(",\"offset\":").append(offset);
    b.append(",\"outcome\":\"").append(outcome.name()).append('"');
    b.append(",\"item\":");
    nullable(b, e == null ? null : e.item());
    b.append(",\"location\":");
    nullable(b, e == null ? null : e.location());
    b.append(",\"txn\":");
    nullable(b, e == null ? null : e.txn());
    b.append(",\"rev\":").append(e == null ? "null" : Integer.toString(e.rev()));
    return b.append('}').toString();
  }

  private static void nullable(StringBuilder b, String s) {
    if (s == null) b.append("null");
    else quote(b, s);
  }

  /**
   * JSON.stringify's escaping: the two-character escapes, other controls and lone surrogates as
   * lowercase \\u.
   */
  static void quote(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\b' -> b.append("\\b");
        case '\f' -> b.append("\\f");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          boolean paired =
              Character.isHighSurrogate(c)
                  && i + 1 < s.length()
                  && Character.isLowSurrogate(s.charAt(i + 1));
          if (paired) {
            b.append(c).append(s.charAt(++i));
          } else if (c < 0x20 || Character.isSurrogate(c)) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    b.append('"');
  }
}
