package dev.skein.broker.network;

import dev.skein.broker.storage.SegmentChannels;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.DefaultFileRegion;
import io.netty.util.ReferenceCountUtil;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.network.TransferableChannel;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.MessageSizeAccumulator;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.Writable;
import org.apache.kafka.common.record.BaseRecords;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.requests.ResponseHeader;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.List;

/**
 * Encodes a response straight into pooled direct buffers and hands them to Netty without copying
 * record data that lives in segment files: those ranges become file regions that the transport
 * sends with {@code FileChannel.transferTo} (sendfile). The bytes between them (headers, fields,
 * in-memory records) go into one direct buffer per run, so a fetch response of many partitions is a
 * few messages. (Kafka's {@code SendBuilder} first writes the fields into a heap buffer and keeps a
 * send per partition's records, even an empty one's; with a follower's idle partitions that was a
 * tenth of a leader's allocation.)
 */
final class ResponseWriter {
    private ResponseWriter() {
    }

    /**
     * Writes (without flushing) the framed response to the channel; returns its size in bytes. Nothing is
     * written if encoding fails (a segment of the response closed since the read: ClosedChannelException).
     */
    static long write(ChannelHandlerContext ctx, ResponseHeader header, ApiMessage body, short version) throws IOException {
        ObjectSerializationCache cache = body instanceof CachelessMessage m && !m.usesCache(version) ? null : new ObjectSerializationCache();
        MessageSizeAccumulator size = new MessageSizeAccumulator();
        header.data().addSize(size, cache, header.headerVersion());
        body.addSize(size, cache, version);
        Encoder out = new Encoder(ctx.alloc(), 4 + size.sizeExcludingZeroCopy());
        try {
            out.writeInt(size.totalSize());
            header.data().write(out, cache, header.headerVersion());
            body.write(out, cache, version);
            out.endRun();
        } catch (UncheckedIOException e) {
            out.releaseFrom(0);
            throw e.getCause();
        } catch (RuntimeException | Error e) {
            out.releaseFrom(0);
            throw e;
        }
        // what was not handed to the channel when a write throws is released here; what was, the
        // channel releases once sent or failed (a failed write closes the connection: exceptionCaught)
        List<Object> parts = out.parts;
        int i = 0;
        try {
            for (; i < parts.size(); i++) {
                ctx.write(parts.get(i), ctx.voidPromise());
            }
        } catch (RuntimeException | Error e) {
            out.releaseFrom(i + 1);
            throw e;
        }
        return 4L + size.totalSize();
    }

    /**
     * A {@link Writable} into direct buffers: one per run of in-memory bytes, cut by the file ranges of
     * the records it is given, which it keeps as {@link FileSlice}s. Also the channel that a records
     * send writes itself to.
     */
    private static final class Encoder implements Writable, TransferableChannel {
        final List<Object> parts = new ArrayList<>(4);
        private final ByteBufAllocator alloc;
        /** The in-memory bytes still to come (as sized), for the next run's buffer. */
        private int inlineLeft;
        private ByteBuf buf;

        Encoder(ByteBufAllocator alloc, int inlineBytes) {
            this.alloc = alloc;
            this.inlineLeft = inlineBytes;
        }

        private ByteBuf buf() {
            if (buf == null) {
                buf = alloc.directBuffer(Math.max(inlineLeft, 16));
            }
            return buf;
        }

        /** Ends the current run: its buffer becomes a part. */
        void endRun() {
            if (buf != null) {
                inlineLeft -= buf.readableBytes();
                parts.add(buf);
                buf = null;
            }
        }

        /** Releases the parts from {@code from} on (and the run not yet ended). */
        void releaseFrom(int from) {
            if (buf != null) {
                buf.release();
                buf = null;
            }
            for (int i = from; i < parts.size(); i++) {
                ReferenceCountUtil.release(parts.get(i));
            }
        }

        @Override
        public void writeByte(byte val) {
            buf().writeByte(val);
        }

        @Override
        public void writeShort(short val) {
            buf().writeShort(val);
        }

        @Override
        public void writeInt(int val) {
            buf().writeInt(val);
        }

        @Override
        public void writeLong(long val) {
            buf().writeLong(val);
        }

        @Override
        public void writeDouble(double val) {
            buf().writeDouble(val);
        }

        @Override
        public void writeByteArray(byte[] arr) {
            buf().writeBytes(arr);
        }

        @Override
        public void writeUnsignedVarint(int i) {
            ByteBuf b = buf();
            while ((i & 0xFFFFFF80) != 0) {
                b.writeByte((i & 0x7F) | 0x80);
                i >>>= 7;
            }
            b.writeByte(i);
        }

        @Override
        public void writeVarint(int i) {
            writeUnsignedVarint((i << 1) ^ (i >> 31));
        }

        @Override
        public void writeVarlong(long v) {
            long u = (v << 1) ^ (v >> 63);
            ByteBuf b = buf();
            while ((u & 0xFFFFFFFFFFFFFF80L) != 0L) {
                b.writeByte(((int) u & 0x7F) | 0x80);
                u >>>= 7;
            }
            b.writeByte((int) u);
        }

        @Override
        public void writeByteBuffer(ByteBuffer src) {
            // the message keeps its buffer: written from its position, which stays where it was
            int position = src.position();
            buf().writeBytes(src);
            src.position(position);
        }

        @Override
        public void writeRecords(BaseRecords records) {
            try {
                if (records instanceof MemoryRecords m) {
                    if (m.sizeInBytes() > 0) {
                        writeByteBuffer(m.buffer());
                    }
                } else if (records instanceof FileRecords f) {
                    if (f.sizeInBytes() > 0) {
                        f.writeTo(this, 0, f.sizeInBytes());
                    }
                } else {
                    Send send = records.toSend();
                    while (!send.completed()) {
                        send.writeTo(this);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        // ---- the channel a records send writes to: file ranges become parts, bytes go into the run

        @Override
        public long transferFrom(FileChannel fileChannel, long position, long count) throws IOException {
            if (count > 0) {
                // refused (ClosedChannelException) if the segment was closed since the read: the response cannot be sent
                SegmentChannels.Lease lease = SegmentChannels.lease(fileChannel);
                endRun();
                parts.add(new FileSlice(fileChannel, position, count, lease));
            }
            return count;
        }

        @Override
        public int write(ByteBuffer src) {
            int n = src.remaining();
            buf().writeBytes(src);
            return n;
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) {
            long n = 0;
            for (int i = offset; i < offset + length; i++) {
                n += write(srcs[i]);
            }
            return n;
        }

        @Override
        public long write(ByteBuffer[] srcs) {
            return write(srcs, 0, srcs.length);
        }

        @Override
        public boolean hasPendingWrites() {
            return false;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
        }
    }

    /**
     * A range of a segment file. A {@link DefaultFileRegion}, so the epoll transport sends it with
     * {@code sendfile} on the segment's descriptor (NIO with {@code FileChannel.transferTo}). It holds
     * a lease on the segment's file: the segment's close waits for its release (sent, or dropped with
     * the connection), so the descriptor cannot be closed and reused while the range is in flight.
     * Unlike Netty's, releasing it never closes the file channel itself, which belongs to the segment.
     */
    static final class FileSlice extends DefaultFileRegion {
        private final SegmentChannels.Lease lease;

        FileSlice(FileChannel file, long position, long count, SegmentChannels.Lease lease) {
            super(file, position, count);
            this.lease = lease;
        }

        @Override
        protected void deallocate() {
            lease.release();
        }
    }
}
