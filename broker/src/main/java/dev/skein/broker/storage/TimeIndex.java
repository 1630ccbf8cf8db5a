package dev.skein.broker.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Sparse time index of one segment: 12-byte entries (timestamp, long; offset relative to the segment
 * base, int). An entry (t, o) means: the largest timestamp among records up to offset o is t. Timestamps
 * strictly increase across entries. Kept in memory for binary search; the file is derived data.
 */
final class TimeIndex extends AbstractIndex {
    static final int ENTRY_SIZE = 12;

    private long[] timestamps = new long[16];
    private int[] relOffsets = new int[16];

    TimeIndex(Path file, long baseOffset, int maxIndexBytes) throws IOException {
        super(file, baseOffset, maxIndexBytes, ENTRY_SIZE);
    }

    /** Loads the entries in the file (one more than the limit: the forced final entry); false if inconsistent. */
    boolean load() throws IOException {
        return load(maxEntries + 1L);
    }

    @Override
    protected boolean loadEntry(ByteBuffer buf) {
        long ts = buf.getLong();
        int rel = buf.getInt();
        if (rel < 0 || (entries > 0 && (ts <= timestamps[entries - 1] || rel < relOffsets[entries - 1]))) {
            return false;
        }
        add(ts, rel);
        return true;
    }

    /** Appends (timestamp, offset) if timestamp is larger than the last entry's; {@code force} ignores the size limit. */
    synchronized void maybeAppend(long timestamp, long offset, boolean force) throws IOException {
        if (timestamp < 0 || (entries > 0 && timestamp <= timestamps[entries - 1])) {
            return;
        }
        if (!force && entries >= maxEntries) {
            throw new IllegalStateException("time index " + file + " is full");
        }
        int rel = (int) (offset - baseOffset);
        if (entries > 0 && rel < relOffsets[entries - 1]) {
            return;
        }
        add(timestamp, rel);
        entryAdded();
    }

    @Override
    protected void encodeEntries(int from, int to, ByteBuffer buf) {
        for (int slot = from; slot < to; slot++) {
            buf.putLong(timestamps[slot]).putInt(relOffsets[slot]);
        }
    }

    /**
     * The offset of the last entry whose timestamp is strictly below {@code target}: every record at or
     * before it has a smaller timestamp, so a search for the first record >= target may start after it.
     * Returns -1 if there is no such entry.
     */
    synchronized long lastOffsetBefore(long target) {
        int idx = Arrays.binarySearch(timestamps, 0, entries, target);
        int slot = idx >= 0 ? idx - 1 : -idx - 2;
        return slot < 0 ? -1 : baseOffset + relOffsets[slot];
    }

    synchronized long lastTimestamp() {
        return entries == 0 ? -1 : timestamps[entries - 1];
    }

    synchronized long lastOffset() {
        return entries == 0 ? -1 : baseOffset + relOffsets[entries - 1];
    }

    private void add(long ts, int rel) {
        if (entries == timestamps.length) {
            timestamps = Arrays.copyOf(timestamps, entries * 2);
            relOffsets = Arrays.copyOf(relOffsets, entries * 2);
        }
        timestamps[entries] = ts;
        relOffsets[entries] = rel;
        entries++;
    }
}
