package dev.skein.broker.storage;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Leases on the file channels of log segments, so that a segment's file is not closed while a
 * response still has to send a range of it. The epoll transport's {@code sendfile} takes the
 * channel's descriptor number when it writes, without the JDK's guard against a concurrent close;
 * a descriptor closed in between and reused by another open would send that file's bytes. A segment
 * registers its channel when it opens and asks for it to be closed through {@link #close}, which
 * closes at once when no lease is held and otherwise when the last lease is released.
 *
 * <p>Process-wide, like the descriptor table it protects: a response only knows the
 * {@link FileChannel} that Kafka's {@code FileRecords} hands to its transfer, and the channel's
 * identity is the key.
 */
public final class SegmentChannels {
    private static final Logger log = LoggerFactory.getLogger(SegmentChannels.class);
    private static final ConcurrentHashMap<FileChannel, Entry> REGISTERED = new ConcurrentHashMap<>();

    /** A lease: release it once, when the range it covers has been sent or dropped. */
    public interface Lease {
        void release();
    }

    private static final Lease UNREGISTERED = () -> {
    };

    private SegmentChannels() {
    }

    /** Makes {@code channel}, a segment's, subject to leases until {@link #close} closes it. */
    static void register(FileChannel channel) {
        REGISTERED.put(channel, new Entry(channel));
    }

    /**
     * Takes a lease on {@code channel}: until it is released, a {@link #close} of the channel is put
     * off. A channel that is not a segment's is not leased (its owner closes it).
     *
     * @throws ClosedChannelException if the channel is closed or its segment asked for it to be closed
     */
    public static Lease lease(FileChannel channel) throws ClosedChannelException {
        Entry entry = REGISTERED.get(channel);
        if (entry == null) {
            if (!channel.isOpen()) {
                throw new ClosedChannelException();
            }
            return UNREGISTERED;
        }
        return entry.lease();
    }

    /**
     * Closes {@code channel} with {@code closer} now if no lease is held, else when the last lease is
     * released (an error then is logged, there being no caller to tell). Later leases are refused. A
     * second call does nothing.
     */
    static void close(FileChannel channel, Closer closer) throws IOException {
        Entry entry = REGISTERED.get(channel);
        if (entry == null) {
            closer.close();
            return;
        }
        entry.close(closer);
    }

    /** Leases held on {@code channel} (0 for a channel that is not registered); for tests. */
    static int leases(FileChannel channel) {
        Entry entry = REGISTERED.get(channel);
        return entry == null ? 0 : entry.leases();
    }

    /** How a segment closes its channel. */
    @FunctionalInterface
    interface Closer {
        void close() throws IOException;
    }

    private static final class Entry implements Lease {
        private final FileChannel channel;
        private int leases;
        private Closer closer;
        private boolean closing;

        Entry(FileChannel channel) {
            this.channel = channel;
        }

        synchronized Lease lease() throws ClosedChannelException {
            if (closing) {
                throw new ClosedChannelException();
            }
            leases++;
            return this;
        }

        synchronized int leases() {
            return leases;
        }

        void close(Closer how) throws IOException {
            synchronized (this) {
                if (closing) {
                    return;
                }
                closing = true;
                if (leases > 0) {
                    closer = how;
                    return;
                }
            }
            closeNow(how);
        }

        @Override
        public void release() {
            Closer due;
            synchronized (this) {
                if (leases == 0) {
                    throw new IllegalStateException("lease of a segment channel released twice");
                }
                if (--leases > 0 || closer == null) {
                    return;
                }
                due = closer;
                closer = null;
            }
            try {
                closeNow(due);
            } catch (IOException e) {
                log.warn("Could not close a segment file after its last send", e);
            }
        }

        private void closeNow(Closer how) throws IOException {
            try {
                how.close();
            } finally {
                // after the close: until then a lease is refused by this entry, then by the closed channel
                REGISTERED.remove(channel, this);
            }
        }
    }
}
