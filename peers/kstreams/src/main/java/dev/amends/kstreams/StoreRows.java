package dev.amends.kstreams;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.utils.Bytes;

/**
 * The two state stores' keys and values, as bytes RocksDB orders.
 *
 * <p>A stock key's prefix is its item and location, each UTF-8 with a 2-byte length in front, so no
 * two keys' prefixes overlap. The authority store's key is prefix + txn; the days store's key is
 * prefix + the 10 ASCII bytes of the day, so a key's days sort by date and a range from a day
 * onward is a RocksDB range scan.
 */
final class StoreRows {
  private StoreRows() {}

  static final int DAY_LENGTH = 10;
  private static final byte[] FIRST_DAY = "0000-00-00".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] LAST_DAY = "9999-99-99".getBytes(StandardCharsets.US_ASCII);

  static byte[] prefix(String item, String location) {
    byte[] i = item.getBytes(StandardCharsets.UTF_8);
    byte[] l = location.getBytes(StandardCharsets.UTF_8);
    // Items and locations are at most 64 code points: at most 256 bytes each.
    return ByteBuffer.allocate(4 + i.length + l.length)
        .putShort((short) i.length)
        .put(i)
        .putShort((short) l.length)
        .put(l)
        .array();
  }

  static Bytes authorityKey(byte[] prefix, String txn) {
    return Bytes.wrap(concat(prefix, txn.getBytes(StandardCharsets.US_ASCII)));
  }

  static Bytes dayKey(byte[] prefix, String day) {
    return Bytes.wrap(concat(prefix, day.getBytes(StandardCharsets.US_ASCII)));
  }

  static Bytes firstDayKey(byte[] prefix) {
    return Bytes.wrap(concat(prefix, FIRST_DAY));
  }

  static Bytes lastDayKey(byte[] prefix) {
    return Bytes.wrap(concat(prefix, LAST_DAY));
  }

  static String dayOf(Bytes key) {
    byte[] k = key.get();
    return new String(k, k.length - DAY_LENGTH, DAY_LENGTH, StandardCharsets.US_ASCII);
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = new byte[a.length + b.length];
    System.arraycopy(a, 0, out, 0, a.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  /** A transaction's authoritative revision: a post with its day and quantity, or a cancel. */
  record Authority(int rev, boolean post, String day, long qty) {
    static Authority of(Envelope e) {
      return new Authority(e.rev(), e.post(), e.day(), e.qty());
    }

    boolean sameContent(Authority other) {
      return post == other.post && qty == other.qty && java.util.Objects.equals(day, other.day);
    }

    byte[] encode() {
      ByteBuffer b =
          ByteBuffer.allocate(post ? 5 + DAY_LENGTH + 8 : 5).putInt(rev).put((byte) (post ? 1 : 0));
      if (post) b.put(day.getBytes(StandardCharsets.US_ASCII)).putLong(qty);
      return b.array();
    }

    static Authority decode(byte[] bytes) {
      ByteBuffer b = ByteBuffer.wrap(bytes);
      int rev = b.getInt();
      if (b.get() == 0) return new Authority(rev, false, null, 0);
      String day = new String(bytes, 5, DAY_LENGTH, StandardCharsets.US_ASCII);
      return new Authority(rev, true, day, b.position(5 + DAY_LENGTH).getLong());
    }
  }

  /**
   * One (stock key, day): the authoritative posts on it (count and sum; active while the count is
   * above 0) and its latest output version (0: none yet), which a retraction keeps so that a
   * re-activated day continues its count. Status: 0 none, else NEGATIVE, LOW, OK.
   */
  record Day(int posts, long qty, int version, long closing, byte status, boolean retracted) {
    static final Day EMPTY = new Day(0, 0, 0, 0, (byte) 0, false);
    static final String[] STATUS = {null, "NEGATIVE", "LOW", "OK"};

    boolean active() {
      return posts > 0;
    }

    boolean shown() {
      return version > 0 && !retracted;
    }

    byte[] encode() {
      return ByteBuffer.allocate(26)
          .putInt(posts)
          .putLong(qty)
          .putInt(version)
          .putLong(closing)
          .put(status)
          .put((byte) (retracted ? 1 : 0))
          .array();
    }

    static Day decode(byte[] bytes) {
      if (bytes == null) return EMPTY;
      ByteBuffer b = ByteBuffer.wrap(bytes);
      return new Day(b.getInt(), b.getLong(), b.getInt(), b.getLong(), b.get(), b.get() == 1);
    }
  }
}
