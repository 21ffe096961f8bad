package dev.amends.kstreams;

import java.util.Map;

/**
 * The record key (amends' src/domain/record-key.ts): strict JSON, an object with exactly the string
 * members {@code item} and {@code location}. Anything else is the empty stock key, which matches no
 * envelope.
 */
record RecordKey(String item, String location) {
  /** The decoded key, or null for the empty stock key. */
  static RecordKey decode(StrictJson json, byte[] bytes) {
    if (bytes == null || bytes.length == 0) return null;
    StrictJson.Node root;
    try {
      root = json.decode(bytes);
    } catch (StrictJson.Malformed e) {
      return null;
    }
    if (!(root instanceof StrictJson.Obj object)) return null;
    Map<String, StrictJson.Node> members = object.members();
    for (String name : members.keySet()) {
      if (!name.equals("item") && !name.equals("location")) return null;
    }
    if (members.get("item") instanceof StrictJson.Str item
        && members.get("location") instanceof StrictJson.Str location) {
      return new RecordKey(item.value(), location.value());
    }
    return null;
  }
}
