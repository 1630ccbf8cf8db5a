package dev.skein.broker.coordinator;

import java.util.HashMap;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.function.LongConsumer;

/**
 * Keyed one-shot timers fired by {@link #poll}, which passes the current time to the task. Scheduling a key replaces its previous timer. Not
 * thread-safe: owned by the coordinator thread.
 */
final class DeadlineTimer {
    private static final class Entry implements Comparable<Entry> {
        final String key;
        final long deadlineMs;
        final long seq;
        final LongConsumer task;
        boolean cancelled;

        Entry(String key, long deadlineMs, long seq, LongConsumer task) {
            this.key = key;
            this.deadlineMs = deadlineMs;
            this.seq = seq;
            this.task = task;
        }

        @Override
        public int compareTo(Entry o) {
            int c = Long.compare(deadlineMs, o.deadlineMs);
            return c != 0 ? c : Long.compare(seq, o.seq);
        }
    }

    private final PriorityQueue<Entry> queue = new PriorityQueue<>();
    private final Map<String, Entry> byKey = new HashMap<>();
    private long seq;

    void schedule(String key, long deadlineMs, LongConsumer task) {
        cancel(key);
        Entry e = new Entry(key, deadlineMs, seq++, task);
        byKey.put(key, e);
        queue.add(e);
    }

    void cancel(String key) {
        Entry e = byKey.remove(key);
        if (e != null) {
            e.cancelled = true;
        }
    }

    boolean isScheduled(String key) {
        return byKey.containsKey(key);
    }

    /** The deadline of a key, or -1 if none is scheduled. */
    long deadline(String key) {
        Entry e = byKey.get(key);
        return e == null ? -1 : e.deadlineMs;
    }

    /** Runs every timer due at {@code nowMs}, in deadline order; returns ms until the next one (Long.MAX_VALUE if none). */
    long poll(long nowMs) {
        while (true) {
            Entry head = queue.peek();
            if (head == null) {
                return Long.MAX_VALUE;
            }
            if (head.cancelled) {
                queue.poll();
                continue;
            }
            if (head.deadlineMs > nowMs) {
                return head.deadlineMs - nowMs;
            }
            queue.poll();
            byKey.remove(head.key);
            head.task.accept(nowMs);
        }
    }
}
