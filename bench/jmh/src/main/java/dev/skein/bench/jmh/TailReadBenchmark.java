package dev.skein.bench.jmh;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
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
 * A read at the end of the log, as every follower fetch and every consumer that keeps up makes: the
 * last {@code behind} batches of the active segment, found and sliced (not sent). This is the lookup
 * {@link FetchBenchmark} leaves out, since it reads at random offsets far from the end.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xmx1g"})
public class TailReadBenchmark {
    /** How many batches before the end the read starts: 1 for a follower that keeps up, more for one a little behind. */
    @Param({"1", "8"})
    int behind;

    private TempLog temp;
    private long start;
    private long endOffset;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        temp = new TempLog();
        MemoryRecords batch = Batches.batch(16, 1024, Compression.NONE, 42);
        for (int i = 0; i < 4096; i++) { // 64 MiB in the active segment
            temp.log.appendAsLeader(batch, 0);
        }
        endOffset = temp.log.logEndOffset();
        start = endOffset - 16L * behind;
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        temp.close();
    }

    @Benchmark
    public int readTail() throws IOException {
        return temp.log.read(start, 1024 * 1024, endOffset, true).records().sizeInBytes();
    }
}
