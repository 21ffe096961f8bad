package dev.amends.kstreams;

import java.math.BigInteger;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A decoded ledger revision (amends' src/domain/envelope.ts): strict decoding decides MALFORMED,
 * the member rules SCHEMA. {@code day} is null and {@code qty} 0 for a cancel.
 */
record Envelope(
    String txn, int rev, boolean post, String item, String location, String day, long qty) {
  /** The envelope format's only version; configuration version 2 did not change it. */
  static final int SCHEMA = 1;

  static final long REV_MAX = Integer.MAX_VALUE;
  static final long QTY_LIMIT = 1_000_000_000L;
  private static final Pattern TXN = Pattern.compile("[A-Za-z0-9._:-]{1,64}");
  private static final Pattern PLAIN_INTEGER = Pattern.compile("-?(?:0|[1-9][0-9]*)");
  private static final Pattern DATE = Pattern.compile("([0-9]{4})-([0-9]{2})-([0-9]{2})");
  private static final Set<String> MEMBERS =
      Set.of("schema", "txn", "rev", "op", "item", "location", "day", "qty");
  private static final int TEXT_LENGTH_MAX = 64;

  /** Why a record was decided before its authority was read: MALFORMED or SCHEMA. */
  static final class Refused extends Exception {
    private static final long serialVersionUID = 1L;
    final Outcome outcome;

    Refused(Outcome outcome, String detail) {
      super(detail, null, false, false);
      this.outcome = outcome;
    }
  }

  static Envelope decode(StrictJson json, byte[] value) throws Refused {
    if (value == null) throw new Refused(Outcome.MALFORMED, "null value");
    StrictJson.Node root;
    try {
      root = json.decode(value);
    } catch (StrictJson.Malformed e) {
      throw new Refused(Outcome.MALFORMED, e.getMessage());
    }
    if (!(root instanceof StrictJson.Obj object))
      throw new Refused(Outcome.MALFORMED, "top level is not an object");
    return judge(object.members());
  }

  private static Envelope judge(Map<String, StrictJson.Node> members) throws Refused {
    for (String name : members.keySet()) {
      if (!MEMBERS.contains(name)) throw schema("unknown member " + name);
    }
    integer(members, "schema", SCHEMA, SCHEMA);
    String txn = string(members, "txn");
    if (!TXN.matcher(txn).matches()) throw schema("txn must be 1-64 characters of [A-Za-z0-9._:-]");
    int rev = (int) integer(members, "rev", 1, REV_MAX);
    String op = string(members, "op");
    String item = text(members, "item");
    String location = text(members, "location");
    if (op.equals("cancel")) {
      if (members.containsKey("day")) throw schema("a cancel must not carry day");
      if (members.containsKey("qty")) throw schema("a cancel must not carry qty");
      return new Envelope(txn, rev, false, item, location, null, 0);
    }
    if (!op.equals("post")) throw schema("op must be \"post\" or \"cancel\"");
    String day = string(members, "day");
    if (!isCalendarDate(day)) throw schema("day must be a real calendar date YYYY-MM-DD");
    long qty = integer(members, "qty", -QTY_LIMIT, QTY_LIMIT);
    return new Envelope(txn, rev, true, item, location, day, qty);
  }

  private static Refused schema(String detail) {
    return new Refused(Outcome.SCHEMA, detail);
  }

  private static StrictJson.Node member(Map<String, StrictJson.Node> members, String name)
      throws Refused {
    StrictJson.Node node = members.get(name);
    if (node == null) throw schema("missing member " + name);
    if (node instanceof StrictJson.Null) throw schema("member " + name + " is null");
    return node;
  }

  private static String string(Map<String, StrictJson.Node> members, String name) throws Refused {
    if (member(members, name) instanceof StrictJson.Str s) return s.value();
    throw schema(name + " must be a string");
  }

  private static String text(Map<String, StrictJson.Node> members, String name) throws Refused {
    String value = string(members, name);
    if (!isTextField(value))
      throw schema(name + " must be 1-64 characters without control characters");
    return value;
  }

  /** A plain JSON integer ({@code -0} is 0) within [min, max]. */
  private static long integer(Map<String, StrictJson.Node> members, String name, long min, long max)
      throws Refused {
    if (!(member(members, name) instanceof StrictJson.Num n))
      throw schema(name + " must be an integer");
    String lexeme = n.lexeme();
    if (!PLAIN_INTEGER.matcher(lexeme).matches()) throw schema(name + " must be a plain integer");
    // Compared as written, at any length: no rounding can carry 2^31 or 10^9+1 into range.
    BigInteger value = new BigInteger(lexeme);
    if (value.compareTo(BigInteger.valueOf(min)) < 0
        || value.compareTo(BigInteger.valueOf(max)) > 0) {
      throw schema(name + " must be within [" + min + ", " + max + "]");
    }
    return value.longValueExact();
  }

  /** 1-64 code points, none of them U+0000-U+001F or U+007F-U+009F (amends' text-rules.ts). */
  static boolean isTextField(String s) {
    int count = s.codePointCount(0, s.length());
    if (count < 1 || count > TEXT_LENGTH_MAX) return false;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c <= 0x1f || (c >= 0x7f && c <= 0x9f)) return false;
    }
    return true;
  }

  /** A real calendar date YYYY-MM-DD, proleptic Gregorian, years 0001-9999. */
  static boolean isCalendarDate(String s) {
    var m = DATE.matcher(s);
    if (!m.matches()) return false;
    int year = Integer.parseInt(m.group(1));
    int month = Integer.parseInt(m.group(2));
    int day = Integer.parseInt(m.group(3));
    if (year < 1 || month < 1 || month > 12 || day < 1) return false;
    boolean leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    int[] days = {31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return day <= days[month - 1];
  }
}
