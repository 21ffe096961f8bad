package dev.amends.kstreams;

/**
 * One version of one (item, location, day) closing balance (amends' output-version.ts). {@code
 * closing} and {@code status} mean nothing when {@code retracted}; the cause is the source record
 * whose decision made it, on the partition its stock key maps to.
 */
record OutputVersion(
    String item,
    String location,
    String day,
    int version,
    long closing,
    String status,
    boolean retracted,
    int causePartition,
    long causeOffset) {}
