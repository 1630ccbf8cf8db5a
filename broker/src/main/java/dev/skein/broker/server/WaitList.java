package dev.skein.broker.server;

import java.util.Arrays;
import java.util.List;

/**
 * What waits on one partition (fetches, acks=all produces): an array that grows to the most that ever
 * waited at once and stays, so joining and leaving allocate nothing. Few wait on a partition at a time
 * (a fetch per follower and per consumer that keeps up, the produces in flight), so a scan to leave costs
 * less than the node a concurrent set allocates per entry, which was the largest single allocation of a
 * leader's replication path. Thread-safe.
 */
final class WaitList<T> {
    private Object[] items = new Object[4];
    private int size;

    synchronized void add(T item) {
        if (size == items.length) {
            items = Arrays.copyOf(items, size * 2);
        }
        items[size++] = item;
    }

    /** Removes every entry of {@code item} (a fetch that names a partition twice is on its list twice). */
    synchronized void remove(T item) {
        // from the end: what moves into a freed slot was already looked at
        for (int i = size - 1; i >= 0; i--) {
            if (items[i] == item) {
                items[i] = items[--size];
                items[size] = null;
            }
        }
    }

    /** A copy of what waits now, to complete outside the lock (completing one removes it). */
    @SuppressWarnings("unchecked")
    synchronized List<T> snapshot() {
        return size == 0 ? List.of() : (List<T>) Arrays.asList(Arrays.copyOf(items, size));
    }

    synchronized int size() {
        return size;
    }
}
