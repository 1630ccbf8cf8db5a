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
 *
 * <p>New entries reach the file in bulk, not one write call each: every {@link #MAX_PENDING} entries, and
 * on {@link #flush} and {@link #close} (so on a clean shutdown, and before a flush moves the log's recovery
 * point past them), and when the segment stops being the active one. An index file can lag its segment only
 * where the log is recovered after an unclean shutdown anyway, which rebuilds its indexes; a lagging file
 * would still be correct, only sparser (a lookup lands on an earlier batch and reads forward). Two write
 * calls per appended batch (offset and time entries) were 1.3 % of a follower's replication thread.
 */
abstract class AbstractIndex implements Closeable {
    protected final Path file;
    protected final long baseOffset;
    protected final int maxEntries;
    private final int entrySize;
    /** Entries kept in memory before they are written to the file together. */
    static final int MAX_PENDING = 128;

    private final FileChannel channel;
    protected int entries;
    /** The entries in the file: entries[0, written); the rest are in memory only, until {@link #writePending}. */
    private int written;

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
        written = entries;
        return true;
    }

    /** Reads one entry from {@code buf} and adds it; returns false if it does not follow the previous entry. */
    protected abstract boolean loadEntry(ByteBuffer buf);

    /**
     * Puts entries [{@code from}, {@code to}) ({@code entrySize} bytes each, as {@link #loadEntry} reads them)
     * into {@code buf}. Each subclass has its own loop: one loop here calling a per-subclass encode saw both
     * index types and C2 deoptimized and recompiled it over and over (profile_predicate).
     */
    protected abstract void encodeEntries(int from, int to, ByteBuffer buf);

    /** An entry was added in memory (entries grew by one): writes the pending ones once there are enough. */
    protected final void entryAdded() throws IOException {
        if (entries - written >= MAX_PENDING) {
            writePending();
        }
    }

    /** Writes the entries not yet in the file after the last one that is, in one write. */
    synchronized void writePending() throws IOException {
        int n = entries - written;
        if (n <= 0) {
            return;
        }
        ByteBuffer buf = ByteBuffer.allocate(n * entrySize);
        encodeEntries(written, entries, buf);
        buf.flip();
        long at = (long) written * entrySize;
        while (buf.hasRemaining()) {
            at += channel.write(buf, at);
        }
        written = entries;
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
        written = Math.min(written, n);
        channel.truncate((long) written * entrySize);
    }

    synchronized void reset() throws IOException {
        entries = 0;
        written = 0;
        channel.truncate(0);
    }

    synchronized void flush() throws IOException {
        writePending();
        channel.force(true);
    }

    @Override
    public synchronized void close() throws IOException {
        if (channel.isOpen()) {
            try {
                // on a full disk this fails: the file then lags, which a reopen tolerates (it is derived data)
                writePending();
                channel.force(true);
            } finally {
                channel.close();
            }
        }
    }
}
