package dev.skein.broker.storage;

import java.io.IOException;
import java.util.ArrayDeque;

/**
 * Segments removed from a partition log whose files (already renamed {@code .deleted}) are closed and deleted
 * only after {@code file.delete.delay.ms}, so that reads still holding them can finish. Guarded by the log's
 * lock; deletion times are in the order segments were added.
 */
final class PendingDeletes {
    private record PendingDelete(LogSegment segment, long deleteAtMs) {
    }

    private final ArrayDeque<PendingDelete> pending = new ArrayDeque<>();

    void add(LogSegment segment, long deleteAtMs) {
        pending.add(new PendingDelete(segment, deleteAtMs));
    }

    /** Closes and deletes the segments whose delay has passed at {@code nowMs}. */
    void deleteDue(long nowMs) throws IOException {
        while (!pending.isEmpty() && pending.peek().deleteAtMs() <= nowMs) {
            pending.poll().segment().closeAndDelete(PartitionLog.DELETED_SUFFIX);
        }
    }

    /** Closes and deletes every pending segment now. */
    void deleteAll() throws IOException {
        while (!pending.isEmpty()) {
            pending.poll().segment().closeAndDelete(PartitionLog.DELETED_SUFFIX);
        }
    }

    /** Closes every pending segment and forgets it, leaving its files to whoever removes the directory. */
    void closeAllQuietly() {
        for (PendingDelete p : pending) {
            p.segment().closeQuietly();
        }
        pending.clear();
    }
}
