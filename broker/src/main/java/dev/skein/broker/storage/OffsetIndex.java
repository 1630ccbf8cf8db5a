package dev.skein.broker.storage;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Sparse offset index of one segment: 8-byte entries (offset relative to the segment base, int; file
 * position of the batch, int), ascending by offset. The entries are kept in memory for binary search and
 * appended to the file; the file is derived data and is rebuilt from the log when missing or inconsistent.
 * Each entry's offset is the last offset of the batch that starts at the entry's position.
 */
final class OffsetIndex extends AbstractIndex {
    static final int ENTRY_SIZE = 8;

    private int[] relOffsets = new int[16];
    private int[] positions = new int[16];

    /** A position in the segment at or before the batch containing the looked-up offset. */
    record Entry(long offset, int position) {
    }

    OffsetIndex(Path file, long baseOffset, int maxIndexBytes) throws IOException {
        super(file, baseOffset, maxIndexBytes, ENTRY_SIZE);
    }

    /** Loads the entries in the file; returns false (and leaves the index empty) if the file is inconsistent. */
    boolean load() throws IOException {
        return load(maxEntries);
    }

    @Override
    protected boolean loadEntry(ByteBuffer buf) {
        int rel = buf.getInt();
        int pos = buf.getInt();
        if (rel < 0 || pos < 0 || (entries > 0 && (rel <= relOffsets[entries - 1] || pos <= positions[entries - 1]))) {
            return false;
        }
        add(rel, pos);
        return true;
    }

    synchronized void append(long offset, int position) throws IOException {
        int rel = toRelative(offset);
        if (entries > 0 && rel <= relOffsets[entries - 1]) {
            return;
        }
        if (entries >= maxEntries) {
            throw new IllegalStateException("offset index " + file + " is full");
        }
        add(rel, position);
        entryAdded();
    }

    @Override
    protected void encodeEntries(int from, int to, ByteBuffer buf) {
        for (int slot = from; slot < to; slot++) {
            buf.putInt(relOffsets[slot]).putInt(positions[slot]);
        }
    }

    /** The last entry whose offset is {@code <= target}, or (baseOffset, 0) if none. */
    synchronized Entry lookup(long target) {
        int slot = floorSlot(target);
        return slot < 0 ? new Entry(baseOffset, 0) : new Entry(baseOffset + relOffsets[slot], positions[slot]);
    }

    /**
     * The position of the last indexed batch that starts in [{@code from}, {@code to}] and whose last offset is
     * below {@code maxOffsetExclusive}, or {@code from} if none does. Every batch from {@code from} up to that
     * position then lies within {@code to} and ends below the bound, offsets and positions rising together.
     */
    synchronized int lastPositionWithin(int from, int to, long maxOffsetExclusive) {
        int slot = Arrays.binarySearch(positions, 0, entries, to);
        slot = slot >= 0 ? slot : -slot - 2;
        while (slot >= 0 && positions[slot] > from && baseOffset + relOffsets[slot] >= maxOffsetExclusive) {
            slot--;
        }
        return slot >= 0 && positions[slot] > from ? positions[slot] : from;
    }

    synchronized Entry lastEntry() {
        return entries == 0 ? new Entry(baseOffset, 0) : new Entry(baseOffset + relOffsets[entries - 1], positions[entries - 1]);
    }

    /** Drops entries for batches at or after {@code position}. */
    synchronized void truncateToPosition(int position) throws IOException {
        int n = entries;
        while (n > 0 && positions[n - 1] >= position) {
            n--;
        }
        keepEntries(n);
    }

    private int floorSlot(long target) {
        if (entries == 0 || target < baseOffset + relOffsets[0]) {
            return -1;
        }
        long rel = target - baseOffset;
        int key = rel > Integer.MAX_VALUE ? Integer.MAX_VALUE : (int) rel;
        int idx = Arrays.binarySearch(relOffsets, 0, entries, key);
        return idx >= 0 ? idx : -idx - 2;
    }

    private int toRelative(long offset) {
        long rel = offset - baseOffset;
        if (rel < 0 || rel > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("offset " + offset + " does not fit segment " + baseOffset);
        }
        return (int) rel;
    }

    private void add(int rel, int pos) {
        if (entries == relOffsets.length) {
            relOffsets = Arrays.copyOf(relOffsets, entries * 2);
            positions = Arrays.copyOf(positions, entries * 2);
        }
        relOffsets[entries] = rel;
        positions[entries] = pos;
        entries++;
    }
}
