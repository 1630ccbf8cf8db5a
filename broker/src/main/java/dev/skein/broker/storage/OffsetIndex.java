package dev.skein.broker.storage;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * Sparse offset index of one segment: 8-byte entries (offset relative to the segment base, int; file
 * position of the batch, int), ascending by offset. The entries are kept in memory for binary search and
 * appended to the file; the file is derived data and is rebuilt from the log when missing or inconsistent.
 * Each entry's offset is the last offset of the batch that starts at the entry's position.
 */
final class OffsetIndex implements Closeable {
    static final int ENTRY_SIZE = 8;

    private final Path file;
    private final long baseOffset;
    private final int maxEntries;
    private FileChannel channel;
    private int[] relOffsets = new int[16];
    private int[] positions = new int[16];
    private int entries;

    /** A position in the segment at or before the batch containing the looked-up offset. */
    record Entry(long offset, int position) {
    }

    OffsetIndex(Path file, long baseOffset, int maxIndexBytes) throws IOException {
        this.file = file;
        this.baseOffset = baseOffset;
        this.maxEntries = Math.max(1, maxIndexBytes / ENTRY_SIZE);
        this.channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    /** Loads the entries in the file; returns false (and leaves the index empty) if the file is inconsistent. */
    synchronized boolean load() throws IOException {
        long size = channel.size();
        if (size % ENTRY_SIZE != 0 || size / ENTRY_SIZE > maxEntries) {
            reset();
            return false;
        }
        ByteBuffer buf = ByteBuffer.allocate((int) size);
        while (buf.hasRemaining() && channel.read(buf, buf.position()) >= 0) {
            // keep reading
        }
        buf.flip();
        entries = 0;
        int prev = -1;
        while (buf.remaining() >= ENTRY_SIZE) {
            int rel = buf.getInt();
            int pos = buf.getInt();
            if (rel <= prev || pos < 0 || (entries > 0 && pos <= positions[entries - 1])) {
                reset();
                return false;
            }
            add(rel, pos);
            prev = rel;
        }
        return true;
    }

    synchronized boolean isFull() {
        return entries >= maxEntries;
    }

    synchronized void append(long offset, int position) throws IOException {
        int rel = toRelative(offset);
        if (entries > 0 && rel <= relOffsets[entries - 1]) {
            return;
        }
        if (entries >= maxEntries) {
            throw new IllegalStateException("offset index " + file + " is full");
        }
        ByteBuffer buf = ByteBuffer.allocate(ENTRY_SIZE).putInt(rel).putInt(position).flip();
        long at = (long) entries * ENTRY_SIZE;
        while (buf.hasRemaining()) {
            at += channel.write(buf, at);
        }
        add(rel, position);
    }

    /** The last entry whose offset is {@code <= target}, or (baseOffset, 0) if none. */
    synchronized Entry lookup(long target) {
        int slot = floorSlot(target);
        return slot < 0 ? new Entry(baseOffset, 0) : new Entry(baseOffset + relOffsets[slot], positions[slot]);
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
        entries = n;
        channel.truncate((long) n * ENTRY_SIZE);
    }

    synchronized int entries() {
        return entries;
    }

    synchronized void truncateToEntries(int n) throws IOException {
        if (n < entries) {
            entries = n;
            channel.truncate((long) n * ENTRY_SIZE);
        }
    }

    synchronized void reset() throws IOException {
        entries = 0;
        channel.truncate(0);
    }

    synchronized void flush() throws IOException {
        channel.force(true);
    }

    @Override
    public synchronized void close() throws IOException {
        if (channel.isOpen()) {
            channel.force(true);
            channel.close();
        }
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
