package dev.skein.broker.network;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.FileRegion;
import io.netty.util.AbstractReferenceCounted;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.network.TransferableChannel;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.SendBuilder;
import org.apache.kafka.common.requests.ResponseHeader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.util.ArrayList;
import java.util.List;

/**
 * Encodes a response with Kafka's {@link SendBuilder} and hands it to Netty without copying record
 * data that lives in segment files: those ranges become {@link FileRegion}s that the transport sends
 * with {@code FileChannel.transferTo} (sendfile). The bytes between them (headers, fields, in-memory
 * records) are copied once into one pooled direct buffer per run, which is the copy the NIO transport
 * would make of each heap buffer anyway: a fetch response of many partitions becomes a few messages
 * instead of one per field run and partition.
 */
final class ResponseWriter {
    private ResponseWriter() {
    }

    /** Writes (without flushing) the framed response to the channel; returns its size in bytes. */
    static long write(ChannelHandlerContext ctx, ResponseHeader header, ApiMessage body, short version) throws IOException {
        Send send = SendBuilder.buildResponseSend(header, body, version);
        Collector collector = new Collector();
        while (!send.completed()) {
            send.writeTo(collector);
        }
        collector.endRun();
        // buffers are allocated only here, each handed to the channel at once: nothing to release on a failure above
        for (Object part : collector.parts) {
            if (part instanceof Run run) {
                ByteBuf buf = ctx.alloc().directBuffer(run.bytes);
                for (ByteBuffer b : run.buffers) {
                    buf.writeBytes(b);
                }
                ctx.write(buf);
            } else {
                ctx.write(part);
            }
        }
        return collector.total;
    }

    /** Consecutive in-memory parts of a response, sent as one buffer. */
    private static final class Run {
        final List<ByteBuffer> buffers = new ArrayList<>(4);
        int bytes;
    }

    /** A channel that records what was written to it, in order: runs of in-memory bytes and file ranges. */
    private static final class Collector implements TransferableChannel {
        final List<Object> parts = new ArrayList<>(4);
        private Run run;
        long total;

        void endRun() {
            if (run != null) {
                parts.add(run);
                run = null;
            }
        }

        @Override
        public boolean hasPendingWrites() {
            return false;
        }

        @Override
        public long transferFrom(FileChannel fileChannel, long position, long count) {
            if (count > 0) {
                endRun();
                parts.add(new FileSlice(fileChannel, position, count));
                total += count;
            }
            return count;
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
        public int write(ByteBuffer src) {
            int n = src.remaining();
            if (n > 0) {
                if (run == null) {
                    run = new Run();
                }
                // the send's buffers are not reused while the response is built, so a slice is enough
                run.buffers.add(src.slice());
                run.bytes += n;
                src.position(src.limit());
                total += n;
            }
            return n;
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
     * A range of a segment file. Unlike Netty's {@code DefaultFileRegion} it never closes the file
     * channel, which belongs to the log segment and stays open for other readers.
     */
    static final class FileSlice extends AbstractReferenceCounted implements FileRegion {
        private final FileChannel file;
        private final long position;
        private final long count;
        private long transferred;

        FileSlice(FileChannel file, long position, long count) {
            this.file = file;
            this.position = position;
            this.count = count;
        }

        @Override
        public long position() {
            return position;
        }

        @Override
        @Deprecated
        public long transfered() {
            return transferred;
        }

        @Override
        public long transferred() {
            return transferred;
        }

        @Override
        public long count() {
            return count;
        }

        @Override
        public long transferTo(WritableByteChannel target, long pos) throws IOException {
            long remaining = count - pos;
            if (remaining <= 0) {
                return 0;
            }
            long written = file.transferTo(position + pos, remaining, target);
            if (written > 0) {
                transferred += written;
            } else if (written == 0 && position + pos >= file.size()) {
                throw new IOException("segment file truncated while being sent");
            }
            return written;
        }

        @Override
        public FileRegion retain() {
            super.retain();
            return this;
        }

        @Override
        public FileRegion retain(int increment) {
            super.retain(increment);
            return this;
        }

        @Override
        public FileRegion touch() {
            return this;
        }

        @Override
        public FileRegion touch(Object hint) {
            return this;
        }

        @Override
        protected void deallocate() {
            // the file channel belongs to the segment
        }
    }
}
