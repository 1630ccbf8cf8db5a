package dev.skein.broker.storage;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The file handling shared by a segment's sparse indexes: a file of fixed-size entries, appended in order and
 * mirrored in memory by the subclass, which holds the entry layout and the lookups. The file is derived data;
 * {@link #load} rejects (and empties) a file that is inconsistent, and the segment then rebuilds it from the log.
 * Every method is synchronized on the index.
 */
abstract class AbstractIndex implements Closeable {
    protected final Path file;
    protected final long baseOffset;
    protected final int maxEntries;
    private final int entrySize;
    private final FileChannel channel;
    protected int entries;

    AbstractIndex(Path file, long baseOffset, int maxIndexBytes, int entrySize) throws IOException {
        this.file = file;
        this.baseOffset = baseOffset;
        this.entrySize = entrySize;
        this.maxEntries = Math.max(1, maxIndexBytes / entrySize);
        this.channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    /**
     * Loads the entries in the file; returns false (and leaves the index empty) if the file is inconsistent.
     * A file of more than {@code maxFileEntries} entries is inconsistent.
     */
    protected final synchronized boolean load(long maxFileEntries) throws IOException {
        long size = channel.size();
        if (size % entrySize != 0 || size / entrySize > maxFileEntries) {
            reset();
            return false;
        }
        ByteBuffer buf = ByteBuffer.allocate((int) size);
        while (buf.hasRemaining() && channel.read(buf, buf.position()) >= 0) {
            // keep reading
        }
        buf.flip();
        entries = 0;
        while (buf.remaining() >= entrySize) {
            if (!loadEntry(buf)) {
                reset();
                return false;
            }
        }
        return true;
    }

    /** Reads one entry from {@code buf} and adds it; returns false if it does not follow the previous entry. */
    protected abstract boolean loadEntry(ByteBuffer buf);

    /** Writes one encoded entry ({@code entrySize} bytes, flipped) after the last entry in the file. */
    protected final void writeEntry(ByteBuffer buf) throws IOException {
        long at = (long) entries * entrySize;
        while (buf.hasRemaining()) {
            at += channel.write(buf, at);
        }
    }

    synchronized boolean isFull() {
        return entries >= maxEntries;
    }

    synchronized int entries() {
        return entries;
    }

    synchronized void truncateToEntries(int n) throws IOException {
        if (n < entries) {
            keepEntries(n);
        }
    }

    /** Keeps the first {@code n} entries and cuts the file to exactly their size. */
    protected final void keepEntries(int n) throws IOException {
        entries = n;
        channel.truncate((long) n * entrySize);
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
}
