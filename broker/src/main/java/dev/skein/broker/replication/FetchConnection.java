package dev.skein.broker.replication;

import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.utils.Time;

import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * A follower's connection to its leader: one request, then its size-prefixed response, at a time.
 *
 * <p>Requests and responses of up to {@link #REUSED_BYTES} go through direct buffers kept for the
 * connection's life, so a fetch response is read from the socket straight into the memory its
 * records are then written to the log from: no copy into the heap and out again (the JDK copies a
 * heap buffer into a temporary direct one for every read and write). A larger response is read
 * into a heap buffer of its own, through the direct one, and dropped after its round.
 *
 * <p>The channel is non-blocking under a selector so that a read has a deadline (a blocking
 * {@link SocketChannel} ignores {@code SO_TIMEOUT}). Not thread-safe, except {@link #close}, which
 * may be called from another thread to end a round in progress (the round then throws).
 */
final class FetchConnection implements Closeable {
    /** Buffers up to this size are kept between rounds; larger responses get a heap buffer of their own. */
    static final int REUSED_BYTES = 1 << 20;
    private static final int INITIAL_BYTES = 64 * 1024;

    private final SocketChannel channel;
    private final Selector selector;
    private final Time time;
    private final SelectionKey key;
    private ByteBuffer send = ByteBuffer.allocateDirect(4 * 1024);
    private ByteBuffer receive = ByteBuffer.allocateDirect(INITIAL_BYTES);

    private FetchConnection(SocketChannel channel, Selector selector, Time time) throws IOException {
        this.channel = channel;
        this.time = time;
        this.selector = selector;
        this.key = channel.register(selector, 0);
    }

    /**
     * Connects within {@code timeoutMs}; Nagle off (a fetch is one small write awaiting its answer).
     * {@code receiveBufferBytes} is the socket's SO_RCVBUF, set before the connect so that the
     * handshake offers its window (-1: the operating system's). A round's deadline is kept by {@code time}.
     */
    static FetchConnection open(String host, int port, int timeoutMs, int receiveBufferBytes, Time time) throws IOException {
        SocketChannel channel = SocketChannel.open();
        Selector selector = null;
        try {
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            if (receiveBufferBytes > 0) {
                channel.setOption(StandardSocketOptions.SO_RCVBUF, receiveBufferBytes);
            }
            channel.socket().connect(new InetSocketAddress(host, port), timeoutMs);
            channel.configureBlocking(false);
            selector = Selector.open();
            return new FetchConnection(channel, selector, time);
        } catch (IOException | RuntimeException e) {
            closeQuietly(channel);
            if (selector != null) {
                closeQuietly(selector);
            }
            throw e;
        }
    }

    boolean isOpen() {
        return channel.isOpen() && selector.isOpen();
    }

    /**
     * Sends one request frame (the 4-byte size, then {@code parts} back to back) and returns the body
     * of the response frame, read within {@code timeoutMs} of the call. The buffer returned is valid
     * until the next round: nothing may keep it, or a view of it, past that.
     *
     * @throws IOException on a response larger than {@code maxResponseBytes}, bytes beyond the
     *                     response frame, the deadline, or the connection's end or close
     */
    ByteBuffer roundTrip(ByteBuffer[] parts, long timeoutMs, long maxResponseBytes) throws IOException {
        long deadline = time.nanoseconds() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        write(parts, deadline);
        return read(deadline, maxResponseBytes);
    }

    /**
     * As {@link #roundTrip(ByteBuffer[], long, long)}, for a request of {@code header} (its encoded
     * bytes) and {@code body} encoded at {@code version} with {@code cache}: the body is written straight
     * into the connection's send buffer, not into a buffer of its own first.
     */
    ByteBuffer roundTrip(ByteBuffer header, Message body, short version, ObjectSerializationCache cache, long timeoutMs,
                         long maxResponseBytes) throws IOException {
        long deadline = time.nanoseconds() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        int size = header.remaining() + body.size(cache, version);
        ByteBuffer out = sendBuffer(4 + size);
        out.putInt(size);
        out.put(header.duplicate());
        body.write(new ByteBufferAccessor(out), cache, version);
        if (out.position() != 4 + size) {
            throw new IllegalStateException("request encoded to " + (out.position() - 4) + " bytes, not the " + size + " it sized");
        }
        flush(out.flip(), deadline);
        return read(deadline, maxResponseBytes);
    }

    /** The send buffer, cleared, with room for {@code bytes}. */
    private ByteBuffer sendBuffer(int bytes) {
        if (send.capacity() < bytes) {
            send = ByteBuffer.allocateDirect(Math.max(bytes, 2 * send.capacity()));
        }
        return send.clear();
    }

    private void write(ByteBuffer[] parts, long deadline) throws IOException {
        int size = 0;
        for (ByteBuffer p : parts) {
            size += p.remaining();
        }
        ByteBuffer out = sendBuffer(4 + size);
        out.putInt(size);
        for (ByteBuffer p : parts) {
            int at = p.position();
            out.put(p);
            p.position(at);
        }
        flush(out.flip(), deadline);
    }

    /** Writes {@code out} out within the deadline; a send buffer grown past {@link #REUSED_BYTES} is then dropped. */
    private void flush(ByteBuffer out, long deadline) throws IOException {
        while (out.hasRemaining()) {
            if (channel.write(out) == 0) {
                await(SelectionKey.OP_WRITE, deadline);
            }
        }
        if (send.capacity() > REUSED_BYTES) {
            send = ByteBuffer.allocateDirect(4 * 1024);
        }
    }

    private ByteBuffer read(long deadline, long maxResponseBytes) throws IOException {
        ByteBuffer in = receive.clear();
        while (in.position() < 4) {
            fill(in, deadline);
        }
        int size = in.getInt(0);
        if (size < 0 || size > maxResponseBytes) {
            throw new IOException("response of " + size + " bytes is out of bounds (at most " + maxResponseBytes + ")");
        }
        if (in.position() > 4 + size) {
            throw new IOException("the leader sent " + (in.position() - 4 - size) + " bytes beyond its response");
        }
        if (4 + size <= REUSED_BYTES) {
            if (4 + size > in.capacity()) {
                ByteBuffer bigger = ByteBuffer.allocateDirect(Math.min(REUSED_BYTES, Math.max(4 + size, 2 * in.capacity())));
                bigger.put(in.flip());
                receive = bigger;
                in = bigger;
            }
            in.limit(4 + size);
            while (in.hasRemaining()) {
                fill(in, deadline);
            }
            return in.flip().position(4).slice();
        }
        // too large to keep: a heap buffer of its own, filled through the direct one
        ByteBuffer body = ByteBuffer.allocate(size);
        body.put(in.flip().position(4));
        while (body.hasRemaining()) {
            in.clear().limit(Math.min(in.capacity(), body.remaining()));
            while (in.position() == 0) {
                fill(in, deadline);
            }
            body.put(in.flip());
        }
        return body.flip();
    }

    /** Reads what the socket has into {@code buf}, waiting for it if nothing. */
    private void fill(ByteBuffer buf, long deadline) throws IOException {
        int n = channel.read(buf);
        if (n < 0) {
            throw new IOException("the leader closed the connection");
        }
        if (n == 0) {
            await(SelectionKey.OP_READ, deadline);
        }
    }

    private void await(int ops, long deadline) throws IOException {
        long ms = TimeUnit.NANOSECONDS.toMillis(deadline - time.nanoseconds());
        if (ms <= 0) {
            throw new SocketTimeoutException("no response from the leader in time");
        }
        try {
            key.interestOps(ops);
            selector.select(ms);
            selector.selectedKeys().clear();
        } catch (ClosedSelectorException | CancelledKeyException e) {
            throw new IOException("the connection was closed", e);
        }
        if (Thread.currentThread().isInterrupted()) {
            throw new InterruptedIOException("interrupted while waiting for the leader");
        }
        if (!isOpen()) {
            throw new IOException("the connection was closed");
        }
    }

    @Override
    public void close() {
        closeQuietly(selector);
        closeQuietly(channel);
    }

    private static void closeQuietly(Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing
        }
    }
}
