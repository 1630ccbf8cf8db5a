package dev.skein.broker.storage;

import java.util.ArrayList;
import java.util.List;

/**
 * Leader epochs of a partition and the first offset written in each, ascending by both. Serves
 * OffsetForLeaderEpoch. Mutated by the owning {@link PartitionLog} under its lock; readers are synchronized.
 */
final class LeaderEpochCache {
    record EpochEntry(int epoch, long startOffset) {
    }

    private final List<EpochEntry> entries = new ArrayList<>();

    synchronized List<EpochEntry> entries() {
        return List.copyOf(entries);
    }

    synchronized int latestEpoch() {
        return entries.isEmpty() ? -1 : entries.get(entries.size() - 1).epoch();
    }

    /** Records that {@code epoch} starts at {@code startOffset} if it is newer than the latest; returns whether it changed. */
    synchronized boolean assign(int epoch, long startOffset) {
        if (epoch < 0) {
            return false;
        }
        if (!entries.isEmpty()) {
            EpochEntry last = entries.get(entries.size() - 1);
            if (epoch <= last.epoch()) {
                return false;
            }
            // A newer epoch starting at or before an older one's start supersedes it.
            while (!entries.isEmpty() && entries.get(entries.size() - 1).startOffset() >= startOffset) {
                entries.remove(entries.size() - 1);
            }
        }
        entries.add(new EpochEntry(epoch, startOffset));
        return true;
    }

    /**
     * Kafka's OffsetForLeaderEpoch: the requested epoch itself ends at the log end offset if it is the latest;
     * otherwise the answer is the largest epoch not above it, ending where the next larger epoch starts. A
     * request above the latest epoch (or on an empty cache) is (-1, -1). A request below the first known epoch
     * is (requested, start of the first epoch), as Kafka answers.
     */
    synchronized EpochEndOffset endOffsetFor(int requested, long logEndOffset) {
        if (requested < 0 || entries.isEmpty()) {
            return EpochEndOffset.UNDEFINED;
        }
        if (requested == latestEpoch()) {
            return new EpochEndOffset(requested, logEndOffset);
        }
        EpochEntry floor = null;
        EpochEntry higher = null;
        for (EpochEntry e : entries) {
            if (e.epoch() <= requested) {
                floor = e;
            } else {
                higher = e;
                break;
            }
        }
        if (higher == null) {
            return EpochEndOffset.UNDEFINED;
        }
        return new EpochEndOffset(floor == null ? requested : floor.epoch(), higher.startOffset());
    }

    /** Drops epochs starting at or after {@code endOffset} (log truncated to it). */
    synchronized boolean truncateFromEnd(long endOffset) {
        boolean changed = false;
        while (!entries.isEmpty() && entries.get(entries.size() - 1).startOffset() >= endOffset) {
            entries.remove(entries.size() - 1);
            changed = true;
        }
        return changed;
    }

    /** The log now starts at {@code startOffset}: drops epochs wholly before it and clamps the one containing it. */
    synchronized boolean truncateFromStart(long startOffset) {
        int lastBefore = -1;
        for (int i = 0; i < entries.size() && entries.get(i).startOffset() < startOffset; i++) {
            lastBefore = i;
        }
        if (lastBefore < 0) {
            return false;
        }
        EpochEntry kept = entries.get(lastBefore);
        entries.subList(0, lastBefore + 1).clear();
        entries.add(0, new EpochEntry(kept.epoch(), startOffset));
        return true;
    }

    synchronized void clear() {
        entries.clear();
    }

    synchronized void load(List<EpochEntry> loaded) {
        entries.clear();
        entries.addAll(loaded);
    }
}
