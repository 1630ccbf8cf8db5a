package dev.skein.broker.checker;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * What clients saw of a replicated log during a fault test, recorded as it happened and checked
 * afterwards by {@link LogChecker}: every send and its outcome, every record each consumer polled,
 * and the contents of each replica's log at the end. Thread-safe for recording.
 */
public final class LogHistory {
    /** A send whose outcome is one of: acknowledged at an offset, failed for sure, or unknown (timed out). */
    public record Send(String value, int partition, Outcome outcome, long offset) {
    }

    public enum Outcome { ACKED, FAILED, UNKNOWN }

    /** One record as a reader saw it. {@code reader} names a consumer or a replica. */
    public record Read(String reader, int partition, long offset, String value) {
    }

    /** A reader repositioned itself (seek, rebalance): the offsets it sees next may go back. */
    public record Reset(String reader, int partition) {
    }

    private final List<Send> sends = new ArrayList<>();
    private final List<Object> reads = new ArrayList<>();

    public synchronized void acked(String value, int partition, long offset) {
        sends.add(new Send(value, partition, Outcome.ACKED, offset));
    }

    public synchronized void failed(String value, int partition) {
        sends.add(new Send(value, partition, Outcome.FAILED, -1));
    }

    public synchronized void unknown(String value, int partition) {
        sends.add(new Send(value, partition, Outcome.UNKNOWN, -1));
    }

    public synchronized void read(String reader, int partition, long offset, String value) {
        reads.add(new Read(reader, partition, offset, value));
    }

    public synchronized void reset(String reader, int partition) {
        reads.add(new Reset(reader, partition));
    }

    public synchronized long ackedCount() {
        return sends.stream().filter(s -> s.outcome() == Outcome.ACKED).count();
    }

    /** How many records this reader has seen. */
    public synchronized long readCount(String reader) {
        return reads.stream().filter(r -> r instanceof Read read && read.reader().equals(reader)).count();
    }

    synchronized List<Send> sends() {
        return Collections.unmodifiableList(new ArrayList<>(sends));
    }

    /** Reads and resets in the order they were recorded. */
    synchronized List<Object> events() {
        return Collections.unmodifiableList(new ArrayList<>(reads));
    }
}
