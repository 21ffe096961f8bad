package dev.amends.kstreams;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Strict JSON decoding of record keys and envelopes, the same grammar as amends'
 * src/domain/strict-json.ts: invalid UTF-8, a leading byte-order mark, anything but exactly one
 * value, duplicate member names (after unescaping, at any depth), unpaired surrogate escapes,
 * unescaped U+0000-U+001F in strings and more than 64 nested containers are all refused. Numbers
 * keep their lexeme, so {@code 1.0} and {@code 1} stay apart.
 *
 * <p>Hand-written because Jackson (on the classpath through kafka-streams) keeps the last of
 * duplicate members by default and forgets how a number was written. One instance per stream task:
 * the UTF-8 decoder it holds is not thread-safe.
 */
final class StrictJson {
  static final int DEPTH_MAX = 64;

  sealed interface Node permits Obj, Arr, Str, Num, Bool, Null {}

  record Obj(Map<String, Node> members) implements Node {}

  record Arr(List<Node> items) implements Node {}

  record Str(String value) implements Node {}

  /** The number exactly as written ({@code 1.0}, {@code -0}, {@code 1e2}). */
  record Num(String lexeme) implements Node {}

  record Bool(boolean value) implements Node {}

  record Null() implements Node {}

  /** Not strict JSON; the message says where, for humans (outcomes never depend on it). */
  static final class Malformed extends Exception {
    private static final long serialVersionUID = 1L;

    Malformed(String detail) {
      super(detail, null, false, false);
    }
  }

  private final CharsetDecoder utf8 =
      StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT);

  /**
   * UTF-8 first (Java's decoder refuses overlong forms, encoded surrogates and truncation), then
   * the grammar.
   */
  Node decode(byte[] bytes) throws Malformed {
    CharBuffer chars;
    try {
      chars = utf8.reset().decode(ByteBuffer.wrap(bytes));
    } catch (CharacterCodingException e) {
      throw new Malformed("not valid UTF-8");
    }
    String text = chars.toString();
    if (!text.isEmpty() && text.charAt(0) == '\uFEFF')
      throw new Malformed("starts with a byte-order mark");
    return new Parser(text).document();
  }

  private static final class Parser {
    private final String text;
    private int pos;

    Parser(String text) {
      this.text = text;
    }

    Node document() throws Malformed {
      skipWhitespace();
      if (pos >= text.length()) throw error("no JSON value");
      Node value = value(0);
      skipWhitespace();
      if (pos < text.length()) throw error("trailing data after the JSON value");
      return value;
    }

    private Malformed error(String what) {
      return new Malformed(what + " at character " + pos);
    }

    private char at(int i) {
      return i < text.length() ? text.charAt(i) : '\0';
    }

    private boolean atEnd() {
      return pos >= text.length();
    }

    private void skipWhitespace() {
      while (pos < text.length()) {
        char c = text.charAt(pos);
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
        pos++;
      }
    }

    /** {@code depth} is the number of containers around this value. */
    private Node value(int depth) throws Malformed {
      if (atEnd()) throw error("not a JSON value");
      switch (text.charAt(pos)) {
        case '{':
          return object(depth + 1);
        case '[':
          return array(depth + 1);
        case '"':
          return new Str(string());
        case 't':
          return literal("true", new Bool(true));
        case 'f':
          return literal("false", new Bool(false));
        case 'n':
          return literal("null", new Null());
        default:
          return number();
      }
    }

    private void enter(int depth) throws Malformed {
      if (depth > DEPTH_MAX) throw error("more than " + DEPTH_MAX + " nested objects and arrays");
      pos++;
      skipWhitespace();
    }

    private Node object(int depth) throws Malformed {
      enter(depth);
      Map<String, Node> members = new HashMap<>();
      if (!atEnd() && text.charAt(pos) == '}') {
        pos++;
        return new Obj(members);
      }
      for (; ; ) {
        if (atEnd() || text.charAt(pos) != '"') throw error("expected a member name");
        String name = string();
        if (members.containsKey(name)) throw error("duplicate member");
        skipWhitespace();
        if (atEnd() || text.charAt(pos) != ':') throw error("expected \":\"");
        pos++;
        skipWhitespace();
        members.put(name, value(depth));
        if (closes('}')) return new Obj(members);
      }
    }

    private Node array(int depth) throws Malformed {
      enter(depth);
      List<Node> items = new ArrayList<>();
      if (!atEnd() && text.charAt(pos) == ']') {
        pos++;
        return new Arr(items);
      }
      for (; ; ) {
        items.add(value(depth));
        if (closes(']')) return new Arr(items);
      }
    }

    /** After a member or an item: true past the container's {@code close}, false past a comma. */
    private boolean closes(char close) throws Malformed {
      skipWhitespace();
      if (atEnd()) throw error("expected \",\" or \"" + close + "\"");
      char next = text.charAt(pos++);
      if (next == close) return true;
      if (next != ',') throw error("expected \",\" or \"" + close + "\"");
      skipWhitespace();
      return false;
    }

    private Node literal(String word, Node node) throws Malformed {
      if (!text.startsWith(word, pos)) throw error("not a JSON value");
      pos += word.length();
      return node;
    }

    private static boolean digit(char c) {
      return c >= '0' && c <= '9';
    }

    /**
     * {@code -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?}, each optional part all or nothing.
     */
    private Node number() throws Malformed {
      int start = pos;
      if (at(pos) == '-') pos++;
      if (at(pos) == '0') {
        pos++;
      } else if (at(pos) >= '1' && at(pos) <= '9') {
        while (digit(at(pos))) pos++;
      } else {
        pos = start;
        throw error("not a JSON value");
      }
      if (at(pos) == '.' && digit(at(pos + 1))) {
        pos++;
        while (digit(at(pos))) pos++;
      }
      if (at(pos) == 'e' || at(pos) == 'E') {
        int exponent = pos + 1;
        if (at(exponent) == '+' || at(exponent) == '-') exponent++;
        if (digit(at(exponent))) {
          pos = exponent;
          while (digit(at(pos))) pos++;
        }
      }
      return new Num(text.substring(start, pos));
    }

    /** Reads a string starting at its opening quote; returns it unescaped. */
    private String string() throws Malformed {
      pos++;
      StringBuilder out = null;
      int runStart = pos;
      for (; ; ) {
        if (atEnd()) throw error("unterminated string");
        char c = text.charAt(pos);
        if (c == '"') {
          String run = text.substring(runStart, pos++);
          return out == null ? run : out.append(run).toString();
        }
        if (c < 0x20) throw error("unescaped control character in a string");
        if (c == '\\') {
          if (out == null) out = new StringBuilder();
          out.append(text, runStart, pos);
          escape(out);
          runStart = pos;
          continue;
        }
        pos++;
      }
    }

    /** Reads one escape sequence starting at its backslash. */
    private void escape(StringBuilder out) throws Malformed {
      char kind = at(pos + 1);
      if (pos + 1 >= text.length()) throw error("unterminated string");
      if (kind != 'u') {
        char simple =
            switch (kind) {
              case '"' -> '"';
              case '\\' -> '\\';
              case '/' -> '/';
              case 'b' -> '\b';
              case 'f' -> '\f';
              case 'n' -> '\n';
              case 'r' -> '\r';
              case 't' -> '\t';
              default -> throw error("invalid escape");
            };
        pos += 2;
        out.append(simple);
        return;
      }
      int unit = hex4();
      if (unit >= 0xdc00 && unit <= 0xdfff)
        throw error("unpaired surrogate escape (a low surrogate first)");
      if (unit < 0xd800 || unit > 0xdbff) {
        out.append((char) unit);
        return;
      }
      // A high surrogate escape counts only when a low surrogate escape follows at once.
      if (at(pos) != '\\' || at(pos + 1) != 'u') throw error("unpaired surrogate escape");
      int low = hex4();
      if (low < 0xdc00 || low > 0xdfff) throw error("unpaired surrogate escape");
      out.append((char) unit).append((char) low);
    }

    /** Reads {@code \\uXXXX} at {@code pos}, moving past it. */
    private int hex4() throws Malformed {
      if (pos + 6 > text.length()) throw error("invalid \\u escape");
      int value = 0;
      for (int i = pos + 2; i < pos + 6; i++) {
        int d = Character.digit(text.charAt(i), 16);
        // Character.digit also takes fullwidth and other Unicode digits: only ASCII hex counts.
        if (d < 0 || text.charAt(i) > 'f') throw error("invalid \\u escape");
        value = value * 16 + d;
      }
      pos += 6;
      return value;
    }
  }
}
