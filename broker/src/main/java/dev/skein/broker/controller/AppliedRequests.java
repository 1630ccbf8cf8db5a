package dev.skein.broker.controller;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.protocol.Errors;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The outcomes of the last {@code capacity} requests whose log entry was applied, by request id:
 * the replicated half of at-most-once. A request reaches the active controller again when a Raft
 * client retries it (a timeout, a leader change, a dropped connection); the retry may be decided
 * anew and proposed as a second entry with the same request id. {@link #apply} applies only the
 * first entry of a request id that reaches the log, and answers every later one with the outcome
 * of that first: its value, its error and its log index (a broker's epoch is the index of its
 * registration). A rejected entry (its precondition failed) is an outcome too.
 *
 * <p>Part of the state machine: every controller applies the same entries in log order, so every
 * controller holds the same table; it is written into snapshots ({@link MetadataCodec#encodeSnapshot}),
 * so it survives restarts and snapshot installs. The oldest outcome is forgotten first (log order,
 * the same on every node); the capacity only has to cover the requests applied while one request
 * is still being retried (a few seconds). Not thread-safe: the state machine owns it under its lock.
 */
public final class AppliedRequests {
    /** Room for the requests of a burst (say every partition of a cluster changing its ISR) while a retry is under way. */
    public static final int DEFAULT_CAPACITY = 4096;
    /** An error message kept longer than this is cut (the table's size stays bounded). */
    static final int MAX_MESSAGE_CHARS = 1000;

    /** What the entry of one request did: NONE or the error that rejected it, the value it yielded, its log index. */
    public record Outcome(short errorCode, String message, long value, long index) {
        public static Outcome ok(long value, long index) {
            return new Outcome(Errors.NONE.code(), null, value, index);
        }

        public static Outcome error(ApiException e, long index) {
            String message = e.getMessage();
            if (message != null && message.length() > MAX_MESSAGE_CHARS) {
                message = message.substring(0, MAX_MESSAGE_CHARS);
            }
            return new Outcome(Errors.forException(e).code(), message, 0, index);
        }

        public boolean isError() {
            return errorCode != Errors.NONE.code();
        }
    }

    /**
     * The state after one entry, and its outcome; {@code duplicate} when the entry's request had an
     * outcome already (the state is then unchanged and the outcome is the earlier one).
     */
    public record Result(MetadataState state, Outcome outcome, boolean duplicate) {
    }

    private final int capacity;
    private final LinkedHashMap<Uuid, Outcome> outcomes = new LinkedHashMap<>();

    public AppliedRequests(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity " + capacity + " must be positive");
        }
        this.capacity = capacity;
    }

    public AppliedRequests() {
        this(DEFAULT_CAPACITY);
    }

    /** The outcome of the entry of {@code requestId}, or null if none was applied (or it was forgotten). */
    public Outcome outcome(Uuid requestId) {
        return requestId == null ? null : outcomes.get(requestId);
    }

    /**
     * Applies {@code entry} (at log index {@code index}) to {@code state} unless its request has an
     * outcome already; records the outcome of a request's first entry.
     */
    public Result apply(MetadataState state, MetadataEntry entry, long index) {
        Outcome earlier = outcome(entry.requestId());
        if (earlier != null) {
            return new Result(state, earlier, true);
        }
        MetadataState next = state;
        Outcome outcome;
        try {
            MetadataState.Applied applied = state.apply(entry.commands(), index);
            next = applied.state();
            outcome = Outcome.ok(applied.value(), index);
        } catch (ApiException e) {
            outcome = Outcome.error(e, index);
        }
        if (entry.requestId() != null) {
            record(entry.requestId(), outcome);
        }
        return new Result(next, outcome, false);
    }

    private void record(Uuid requestId, Outcome outcome) {
        outcomes.put(requestId, outcome);
        while (outcomes.size() > capacity) {
            outcomes.remove(outcomes.keySet().iterator().next());
        }
    }

    public int capacity() {
        return capacity;
    }

    public int size() {
        return outcomes.size();
    }

    /** The outcomes in the order they were applied, oldest first (the order a snapshot keeps). */
    public List<Map.Entry<Uuid, Outcome>> entries() {
        return outcomes.entrySet().stream().map(e -> Map.entry(e.getKey(), e.getValue())).toList();
    }

    /** A table with these outcomes (oldest first), the oldest dropped beyond {@code capacity}. */
    public static AppliedRequests of(int capacity, List<Map.Entry<Uuid, Outcome>> entries) {
        AppliedRequests t = new AppliedRequests(capacity);
        entries.forEach(e -> t.record(e.getKey(), e.getValue()));
        return t;
    }

    public AppliedRequests copy() {
        return of(capacity, entries());
    }
}
