package dev.skein.broker.network;

import dev.skein.broker.storage.SegmentChannels;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.DefaultFileRegion;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.network.TransferableChannel;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.SendBuilder;
import org.apache.kafka.common.requests.ResponseHeader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.List;

/**
 * Encodes a response with Kafka's {@link SendBuilder} and hands it to Netty without copying record
 * data that lives in segment files: those ranges become file regions that the transport sends
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
        try {
            while (!send.completed()) {
                send.writeTo(collector);
            }
        } catch (IOException | RuntimeException e) {
            collector.releaseFrom(0);
            throw e;
        }
        collector.endRun();
        // buffers are allocated only here, each handed to the channel at once (which releases it once
        // sent or failed); what was not handed over when an allocation fails is released here
        List<Object> parts = collector.parts;
        int i = 0;
        try {
            for (; i < parts.size(); i++) {
                Object part = parts.get(i);
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
        } catch (RuntimeException | Error e) {
            collector.releaseFrom(i);
            throw e;
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

        /** Releases the file ranges from part {@code from} on: their leases on the segments' files. */
        void releaseFrom(int from) {
            for (int i = from; i < parts.size(); i++) {
                if (parts.get(i) instanceof FileSlice slice) {
                    slice.release();
                }
            }
        }

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
        public long transferFrom(FileChannel fileChannel, long position, long count) throws IOException {
            if (count > 0) {
                endRun();
                // refused (ClosedChannelException) if the segment was closed since the read: the response cannot be sent
                parts.add(new FileSlice(fileChannel, position, count, SegmentChannels.lease(fileChannel)));
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
