package dev.skein.broker.storage;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * Sparse time index of one segment: 12-byte entries (timestamp, long; offset relative to the segment
 * base, int). An entry (t, o) means: the largest timestamp among records up to offset o is t. Timestamps
 * strictly increase across entries. Kept in memory for binary search; the file is derived data.
 */
final class TimeIndex implements Closeable {
    static final int ENTRY_SIZE = 12;

    private final Path file;
    private final long baseOffset;
    private final int maxEntries;
    private final FileChannel channel;
    private long[] timestamps = new long[16];
    private int[] relOffsets = new int[16];
    private int entries;

    TimeIndex(Path file, long baseOffset, int maxIndexBytes) throws IOException {
        this.file = file;
        this.baseOffset = baseOffset;
        this.maxEntries = Math.max(1, maxIndexBytes / ENTRY_SIZE);
        this.channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    synchronized boolean load() throws IOException {
        long size = channel.size();
        if (size % ENTRY_SIZE != 0 || size / ENTRY_SIZE > maxEntries + 1L) {
            reset();
            return false;
        }
        ByteBuffer buf = ByteBuffer.allocate((int) size);
        while (buf.hasRemaining() && channel.read(buf, buf.position()) >= 0) {
            // keep reading
        }
        buf.flip();
        entries = 0;
        while (buf.remaining() >= ENTRY_SIZE) {
            long ts = buf.getLong();
            int rel = buf.getInt();
            if (rel < 0 || (entries > 0 && (ts <= timestamps[entries - 1] || rel < relOffsets[entries - 1]))) {
                reset();
                return false;
            }
            add(ts, rel);
        }
        return true;
    }

    synchronized boolean isFull() {
        return entries >= maxEntries;
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
        ByteBuffer buf = ByteBuffer.allocate(ENTRY_SIZE).putLong(timestamp).putInt(rel).flip();
        long at = (long) entries * ENTRY_SIZE;
        while (buf.hasRemaining()) {
            at += channel.write(buf, at);
        }
        add(timestamp, rel);
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
