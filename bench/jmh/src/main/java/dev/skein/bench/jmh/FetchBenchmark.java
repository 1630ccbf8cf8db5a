package dev.skein.bench.jmh;

import dev.skein.broker.storage.SegmentChannels;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.network.Send;
import org.apache.kafka.common.network.TransferableChannel;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.SendBuilder;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.requests.ResponseHeader;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * A consumer fetch of a range: index lookup, the file slice, and the response encoded the way the
 * broker sends it (record bytes handed over as a file range for sendfile, never copied). The
 * channel here only counts bytes, so this measures the broker's work, not the network.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xmx1g"})
public class FetchBenchmark {
    @Param({"1048576"})
    int maxBytes;

    /** Whether each file range takes and gives back its lease on the segment's file, as the broker's responses do. */
    @Param({"true", "false"})
    boolean lease;

    private TempLog temp;
    private long endOffset;
    private final SplittableRandom random = new SplittableRandom(7);
    private CountingChannel channel;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        temp = new TempLog();
        MemoryRecords batch = Batches.batch(16, 1024, Compression.NONE, 42);
        for (int i = 0; i < 4096; i++) { // 64 MiB
            temp.log.appendAsLeader(batch, 0);
        }
        endOffset = temp.log.logEndOffset();
        channel = new CountingChannel(lease);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        temp.close();
    }

    @Benchmark
    public long fetchAndEncode() throws IOException {
        long offset = random.nextLong(endOffset - 1000);
        Records records = temp.log.read(offset, maxBytes, endOffset, true).records();
        FetchResponseData response = new FetchResponseData();
        FetchResponseData.FetchableTopicResponse topic = new FetchResponseData.FetchableTopicResponse().setTopic("bench");
        topic.partitions().add(new FetchResponseData.PartitionData().setPartitionIndex(0)
                .setHighWatermark(endOffset).setLastStableOffset(endOffset).setLogStartOffset(0).setRecords(records));
        response.responses().add(topic);
        short version = 12;
        Send send = SendBuilder.buildResponseSend(new ResponseHeader(1, ApiKeys.FETCH.responseHeaderVersion(version)),
                response, version);
        long total = 0;
        while (!send.completed()) {
            total += send.writeTo(channel);
        }
        return total;
    }

    /** Accepts everything; file ranges are counted (and leased, with {@code lease}), not read. */
    static final class CountingChannel implements TransferableChannel {
        private final boolean lease;
        long bytes;

        CountingChannel(boolean lease) {
            this.lease = lease;
        }

        @Override
        public boolean hasPendingWrites() {
            return false;
        }

        @Override
        public long transferFrom(FileChannel fileChannel, long position, long count) throws IOException {
            if (lease) {
                // the broker releases it when the transport has sent the range; here at once
                SegmentChannels.lease(fileChannel).release();
            }
            bytes += count;
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
            src.position(src.limit());
            bytes += n;
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
}
