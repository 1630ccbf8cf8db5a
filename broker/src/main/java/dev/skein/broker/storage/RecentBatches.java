package dev.skein.broker.storage;

import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * Where the last {@link #CAPACITY} batches of the active segment are, oldest first, kept in memory so that a
 * read near the end of the log (every follower fetch, every consumer that keeps up) finds its batches without
 * reading each batch's header back from the file. Before this table, such a read cost two {@code pread}s per
 * batch it passed: one for the log header, one for the batch header holding the last offset.
 *
 * <p>Batches are added by the segment's single appender (under the partition log's lock), each before the
 * file's published size covers it, and they are contiguous: each starts where the one before ended. Readers
 * take no lock. A reader passes the file size it read first and only uses batches that end within it; every
 * slot names the batch it holds by sequence number, so a reader that finds a slot overwritten by a newer
 * batch, or the table cleared while it read, answers {@link #UNKNOWN} and the caller scans the file as
 * before. So does a read further back than the table reaches.
 */
final class RecentBatches {
    /** Batches kept; a power of two. A follower or a tailing consumer asks for one of the last few. */
    static final int CAPACITY = 32;
    private static final int MASK = CAPACITY - 1;

    /** {@link #findPosition}: no batch within the size given has a last offset at or after the target. */
    static final int NONE = -1;
    /** {@link #findPosition}: the table cannot tell; scan the file. */
    static final int UNKNOWN = -2;
    /** {@link #read}'s answer when the table cannot tell. */
    static final Range UNKNOWN_RANGE = new Range(UNKNOWN, 0);

    /** Whole batches of a segment: {@code size} bytes from {@code position}. */
    record Range(int position, int size) {
    }

    /** One batch; {@code seq} tells a reader whether the slot still holds the batch it expects. */
    private record Batch(long seq, long baseOffset, long lastOffset, int position, int size) {
        int end() {
            return position + size;
        }
    }

    private final Batch[] slots = new Batch[CAPACITY];
    /** The sequence number the next batch gets; a volatile write of it publishes the slot written before. */
    private volatile long next;
    /** The oldest sequence number still describing the file; {@link #clear} moves it up to {@link #next}. */
    private volatile long oldest;

    /** Records the batch at {@code position}. Appender only. */
    void add(long baseOffset, long lastOffset, int position, int size) {
        long seq = next;
        if (seq > oldest) {
            Batch previous = slots[(int) ((seq - 1) & MASK)];
            if (previous == null || previous.end() != position) {
                // not contiguous with what the table holds (a path that did not record its batches): restart
                oldest = seq;
            }
        }
        slots[(int) (seq & MASK)] = new Batch(seq, baseOffset, lastOffset, position, size);
        next = seq + 1;
    }

    /** Forgets every batch: the file is about to change under them (truncation, a failed append). Appender only. */
    void clear() {
        oldest = next;
    }

    /** Forgets every batch and lets their memory go: the segment is no longer appended to. Appender only. */
    void release() {
        clear();
        Arrays.fill(slots, null);
    }

    /**
     * The position of the first batch with last offset {@code >= target} among those ending within
     * {@code limit} bytes, {@link #NONE} if there is none, or {@link #UNKNOWN}.
     */
    int findPosition(long target, int limit) {
        long from = oldest;
        long to = next;
        long first = firstAtOrAfter(target, limit, from, to);
        if (first < 0) {
            return (int) first;
        }
        Batch batch = slot(first);
        return batch == null || !stillValid(from) ? UNKNOWN : batch.position();
    }

    /**
     * What {@link LogSegment#read} returns, from the table: whole batches from the first with last offset
     * {@code >= startOffset}, at most {@code maxBytes} (unless {@code minOneMessage} and the first alone is
     * larger), none with last offset {@code >= maxOffsetExclusive}, all ending within {@code limit}. Null if no
     * batch within {@code limit} has last offset {@code >= startOffset}; {@link #UNKNOWN_RANGE} if the table
     * cannot tell.
     */
    Range read(long startOffset, int limit, int maxBytes, long maxOffsetExclusive, boolean minOneMessage) {
        long from = oldest;
        long to = next;
        long first = firstAtOrAfter(startOffset, limit, from, to);
        if (first == NONE) {
            return null;
        }
        if (first == UNKNOWN) {
            return UNKNOWN_RANGE;
        }
        int position = -1;
        int total = 0;
        for (long seq = first; seq < to; seq++) {
            Batch batch = slot(seq);
            if (batch == null) {
                return UNKNOWN_RANGE;
            }
            if (position < 0) {
                position = batch.position();
            }
            if (batch.end() > limit || batch.lastOffset() >= maxOffsetExclusive) {
                break;
            }
            int size = batch.size();
            if (!LogSegment.fits(total, size, maxBytes, minOneMessage)) {
                break;
            }
            total += size;
            if (total >= maxBytes) {
                break;
            }
        }
        return stillValid(from) ? new Range(position, total) : UNKNOWN_RANGE;
    }

    /**
     * The sequence number of the first batch with last offset {@code >= target} that ends within {@code limit},
     * {@link #NONE} or {@link #UNKNOWN}. The table can tell only if it holds every batch from the one that may
     * contain the target up to {@code limit}.
     */
    private long firstAtOrAfter(long target, int limit, long from, long to) {
        long lowest = Math.max(from, to - CAPACITY);
        if (lowest >= to) {
            return limit == 0 ? NONE : UNKNOWN;
        }
        // the newest batch within the size the caller read; later ones are not published yet
        long top = to - 1;
        Batch batch = slot(top);
        while (batch != null && batch.end() > limit && top > lowest) {
            batch = slot(--top);
        }
        if (batch == null || batch.end() != limit) {
            return UNKNOWN;
        }
        if (batch.lastOffset() < target) {
            return NONE;
        }
        // back to the first batch at or after the target
        long seq = top;
        while (seq > lowest) {
            Batch before = slot(seq - 1);
            if (before == null) {
                return UNKNOWN;
            }
            if (before.lastOffset() < target) {
                return seq;
            }
            batch = before;
            seq--;
        }
        // the table's oldest batch holds or follows the target: it answers if nothing can come before it
        return batch.baseOffset() <= target || batch.position() == 0 ? seq : UNKNOWN;
    }

    /** The batch with sequence number {@code seq}, or null if its slot holds another by now. */
    private Batch slot(long seq) {
        Batch batch = slots[(int) (seq & MASK)];
        return batch != null && batch.seq() == seq ? batch : null;
    }

    /** Whether no {@link #clear} ran since the reader read {@code from}. */
    private boolean stillValid(long from) {
        // the slot reads above are not to move after the check
        VarHandle.acquireFence();
        return oldest == from;
    }
}
