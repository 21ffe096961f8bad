package dev.amends.kstreams;

import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Decides each source record as amends' src/domain/decide.ts does, one stream task per source
 * partition: checks 1-6 from the record alone, then STALE / DUPLICATE / CONFLICT / APPLIED against
 * the authority store, and for an APPLIED post or cancel the closing balances from the earliest
 * touched day onward, each change a new output version caused by this record.
 *
 * <p>Every stock key maps to one partition and a record on another is ROUTING (never applied), so a
 * task's stores hold exactly the keys of its partition: no repartition is needed.
 */
final class LedgerProcessor implements Processor<byte[], byte[], Routed, String> {
  static final String AUTHORITY_STORE = "authority";
  static final String DAYS_STORE = "days";
  static final String VERSIONS_SINK = "versions";
  static final String DECISIONS_SINK = "decisions";

  /**
   * The largest closing a JavaScript number holds exactly: amends refuses beyond it, so does the
   * peer.
   */
  private static final long SAFE_INTEGER_MAX = (1L << 53) - 1;

  private final LedgerConfig config;
  private final boolean writeDecisions;
  private final StrictJson json = new StrictJson();
  private ProcessorContext<Routed, String> context;
  private KeyValueStore<Bytes, byte[]> authority;
  private KeyValueStore<Bytes, byte[]> days;

  LedgerProcessor(LedgerConfig config, boolean writeDecisions) {
    this.config = config;
    this.writeDecisions = writeDecisions;
  }

  @Override
  public void init(ProcessorContext<Routed, String> context) {
    this.context = context;
    this.authority = context.getStateStore(AUTHORITY_STORE);
    this.days = context.getStateStore(DAYS_STORE);
  }

  @Override
  public void process(Record<byte[], byte[]> record) {
    RecordMetadata source = context.recordMetadata().orElseThrow();
    int partition = source.partition();
    long offset = source.offset();
    Envelope envelope = null;
    Outcome outcome;
    try {
      envelope = Envelope.decode(json, record.value());
      outcome = decide(record.key(), envelope, partition, offset, record);
    } catch (Envelope.Refused refused) {
      outcome = refused.outcome;
    }
    if (writeDecisions) {
      String line = JsonText.decisionLine(partition, offset, outcome, envelope);
      context.forward(record.withKey(new Routed(partition, null)).withValue(line), DECISIONS_SINK);
    }
  }

  /** Checks 3-10 for a record whose envelope passed checks 1-2. */
  private Outcome decide(
      byte[] rawKey, Envelope e, int partition, long offset, Record<byte[], byte[]> record) {
    RecordKey key = RecordKey.decode(json, rawKey);
    if (key == null || !key.item().equals(e.item()) || !key.location().equals(e.location())) {
      return Outcome.KEY_MISMATCH;
    }
    LedgerConfig.Terms terms = config.terms(e.item(), e.location());
    if (terms == null) return Outcome.UNKNOWN_KEY;
    if (terms.partition() != partition) return Outcome.ROUTING;
    if (e.post() && e.day().compareTo(config.ledgerOrigin) < 0) return Outcome.BEFORE_ORIGIN;

    byte[] prefix = StoreRows.prefix(e.item(), e.location());
    Bytes authorityKey = StoreRows.authorityKey(prefix, e.txn());
    byte[] stored = authority.get(authorityKey);
    StoreRows.Authority current = stored == null ? null : StoreRows.Authority.decode(stored);
    StoreRows.Authority incoming = StoreRows.Authority.of(e);
    if (current != null) {
      if (e.rev() < current.rev()) return Outcome.STALE;
      if (e.rev() == current.rev())
        return current.sameContent(incoming) ? Outcome.DUPLICATE : Outcome.CONFLICT;
    }
    authority.put(authorityKey, incoming.encode());
    List<String> touched = new ArrayList<>(2);
    if (current != null && current.post())
      touched.add(changeDayTotal(prefix, current.day(), -current.qty(), -1));
    if (incoming.post()) touched.add(changeDayTotal(prefix, incoming.day(), incoming.qty(), 1));
    if (!touched.isEmpty()) {
      for (OutputVersion v : refreshOutputs(prefix, terms, touched, partition, offset)) {
        Routed routed = new Routed(partition, JsonText.versionKey(v));
        context.forward(
            record.withKey(routed).withValue(JsonText.versionValue(v, config.namespace)),
            VERSIONS_SINK);
      }
    }
    return Outcome.APPLIED;
  }

  private String changeDayTotal(byte[] prefix, String day, long qty, int posts) {
    Bytes key = StoreRows.dayKey(prefix, day);
    StoreRows.Day d = StoreRows.Day.decode(days.get(key));
    StoreRows.Day next =
        new StoreRows.Day(
            d.posts() + posts, d.qty() + qty, d.version(), d.closing(), d.status(), d.retracted());
    check(next.posts() >= 0, "day " + day + " has a negative post count");
    check(
        next.posts() > 0 || next.qty() == 0,
        "day " + day + " has no posts but a total of " + next.qty());
    if (next.posts() == 0 && next.version() == 0) days.delete(key);
    else days.put(key, next.encode());
    return day;
  }

  /**
   * Recomputes closings from the earliest touched day onward and makes a version for each day whose
   * (closing, status) changed, appeared or disappeared (amends' refreshOutputs). Days before the
   * earliest one are untouched: the last of them that is active carries its shown closing in.
   */
  private List<OutputVersion> refreshOutputs(
      byte[] prefix, LedgerConfig.Terms terms, List<String> touched, int partition, long offset) {
    String earliest = touched.stream().min(String::compareTo).orElseThrow();
    long closing = carriedInto(prefix, earliest, terms.opening());
    List<OutputVersion> versions = new ArrayList<>();
    List<KeyValue<Bytes, byte[]>> updates = new ArrayList<>();
    try (KeyValueIterator<Bytes, byte[]> it =
        days.range(StoreRows.dayKey(prefix, earliest), StoreRows.lastDayKey(prefix))) {
      while (it.hasNext()) {
        KeyValue<Bytes, byte[]> row = it.next();
        StoreRows.Day d = StoreRows.Day.decode(row.value);
        if (!d.active() && !d.shown()) continue; // retracted before, not active again
        int version = d.version() + 1;
        StoreRows.Day next;
        if (d.active()) {
          closing = Math.addExact(closing, d.qty());
          if (Math.abs(closing) > SAFE_INTEGER_MAX) {
            throw new ArithmeticException(
                "closing of " + terms.item() + "@" + terms.location() + " exceeds 2^53-1");
          }
          byte status = statusOf(closing, terms.threshold());
          if (d.shown() && d.closing() == closing && d.status() == status)
            continue; // no empty amendments
          next = new StoreRows.Day(d.posts(), d.qty(), version, closing, status, false);
        } else {
          next = new StoreRows.Day(d.posts(), d.qty(), version, 0, (byte) 0, true);
        }
        updates.add(KeyValue.pair(row.key, next.encode()));
        String status = StoreRows.Day.STATUS[next.status()];
        versions.add(
            new OutputVersion(
                terms.item(),
                terms.location(),
                StoreRows.dayOf(row.key),
                version,
                next.closing(),
                status,
                next.retracted(),
                partition,
                offset));
      }
    }
    days.putAll(updates);
    return versions;
  }

  /**
   * The closing shown for the last active day before {@code earliest}, or the opening when there is
   * none.
   */
  private long carriedInto(byte[] prefix, String earliest, long opening) {
    try (KeyValueIterator<Bytes, byte[]> it =
        days.reverseRange(StoreRows.firstDayKey(prefix), StoreRows.dayKey(prefix, earliest))) {
      while (it.hasNext()) {
        KeyValue<Bytes, byte[]> row = it.next();
        if (StoreRows.dayOf(row.key).equals(earliest)) continue;
        StoreRows.Day d = StoreRows.Day.decode(row.value);
        if (!d.active() && !d.shown()) continue;
        check(
            d.active() && d.shown(),
            "day "
                + StoreRows.dayOf(row.key)
                + " before "
                + earliest
                + " is not both active and shown");
        return d.closing();
      }
    }
    return opening;
  }

  private static byte statusOf(long closing, long threshold) {
    if (closing < 0) return 1;
    if (closing < threshold) return 2;
    return 3;
  }

  /** An invariant of the derivation: a failure is a bug, and the stream thread stops on it. */
  private static void check(boolean holds, String what) {
    if (!holds) throw new IllegalStateException("invariant broken: " + what);
  }
}
