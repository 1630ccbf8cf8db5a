package dev.skein.bench.jmh;

import dev.skein.broker.storage.LogAppendInfo;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
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
import java.util.concurrent.TimeUnit;

/**
 * Leader append of one producer batch: validation (CRC-32C, sizes), offset assignment in place,
 * index update and the write; and the follower's append of the same batch as replication hands it
 * over (validation, the offset check instead of the assignment, index and leader-epoch update, the
 * write): with acks=all every batch takes both paths. Throughput in batches per second; multiply by
 * the batch size for bytes.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xmx1g"})
public class AppendBenchmark {
    @Param({"16"})
    int recordsPerBatch;

    @Param({"1024"})
    int valueBytes;

    @Param({"none", "lz4"})
    String compression;

    private TempLog temp;
    private MemoryRecords batch;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        temp = new TempLog();
        batch = Batches.batch(recordsPerBatch, valueBytes, Batches.compression(compression), 42);
    }

    /**
     * Keeps the log from filling tmpfs: each iteration starts from an empty log at the same end offset,
     * and the truncated segments' files are deleted now (an iteration writes ~2 GB; kept for
     * file.delete.delay.ms they piled up in memory and later iterations ran at a sixth of the speed).
     */
    @TearDown(Level.Iteration)
    public void dropData() throws IOException {
        temp.log.truncateFullyAndStartAt(temp.log.logEndOffset());
        temp.log.maybeFlush(temp.time.milliseconds());
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        temp.close();
    }

    @Benchmark
    public LogAppendInfo appendAsLeader() throws IOException {
        // offsets and the CRC are rewritten in place on every append, as for a fresh request
        return temp.log.appendAsLeader(batch, 0);
    }

    @Benchmark
    public LogAppendInfo appendAsFollower() throws IOException {
        // the leader assigned the offsets: the batch continues the follower's log where it ends
        long end = temp.log.logEndOffset();
        for (MutableRecordBatch b : batch.batches()) {
            int count = b.countOrNull();
            b.setLastOffset(end + count - 1);
            b.setPartitionLeaderEpoch(0);
            end += count;
        }
        return temp.log.appendAsFollower(batch);
    }
}
