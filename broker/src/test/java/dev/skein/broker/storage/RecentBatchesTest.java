package dev.skein.broker.storage;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The table of a segment's last batches answers reads near the end of the log as a scan of the file would,
 * tells when it cannot (too far back, cleared, overwritten while read), and a segment reading through it
 * returns the same batches across appends, truncations and a reopen.
 */
class RecentBatchesTest {
    @TempDir
    Path dir;

    private static final long BASE = 500;
    private static final long NOW = 1_000_000L;

    /** A batch of the test's file layout. */
    private record Layout(long baseOffset, long lastOffset, int position, int size) {
        int end() {
            return position + size;
        }
    }

    /** What a scan of the batches answers: LogSegment.read's contract, written out plainly. */
    private static RecentBatches.Range expected(List<Layout> batches, long start, int limit, int maxBytes,
                                                long maxOffsetExclusive, boolean minOne) {
        int first = -1;
        for (int i = 0; i < batches.size(); i++) {
            if (batches.get(i).end() <= limit && batches.get(i).lastOffset() >= start) {
                first = i;
                break;
            }
        }
        if (first < 0) {
            return null;
        }
        int total = 0;
        for (int i = first; i < batches.size(); i++) {
            Layout b = batches.get(i);
            if (b.end() > limit || b.lastOffset() >= maxOffsetExclusive) {
                break;
            }
            if ((long) total + b.size() > maxBytes && !(total == 0 && minOne)) {
                break;
            }
            total += b.size();
            if (total >= maxBytes) {
                break;
            }
        }
        return new RecentBatches.Range(batches.get(first).position(), total);
    }

    @Test
    void answersLikeAScanForEveryBatchItHoldsAndUnknownBeyond() {
        Random random = new Random(11);
        RecentBatches table = new RecentBatches();
        List<Layout> batches = new ArrayList<>();
        long offset = BASE;
        int position = 0;
        int answered = 0;
        for (int n = 0; n < 300; n++) {
            int records = 1 + random.nextInt(5);
            Layout b = new Layout(offset, offset + records - 1, position, 70 + random.nextInt(400));
            table.add(b.baseOffset(), b.lastOffset(), b.position(), b.size());
            batches.add(b);
            offset += records + (random.nextInt(10) == 0 ? 3 : 0); // a gap now and then, as compaction leaves
            position = b.end();
            for (int q = 0; q < 20; q++) {
                // a size a reader may have read: the end of one of the last batches
                int limit = batches.get(Math.max(0, batches.size() - 1 - random.nextInt(3))).end();
                // half anywhere in the log, half among the last offsets, where followers read
                long start = random.nextBoolean() ? BASE - 2 + random.nextInt((int) (offset - BASE) + 4)
                        : offset + 2 - random.nextInt(40);
                int maxBytes = 1 + random.nextInt(2_000);
                long maxExclusive = random.nextBoolean() ? Long.MAX_VALUE : start + random.nextInt(30);
                boolean minOne = random.nextBoolean();
                RecentBatches.Range got = table.read(start, limit, maxBytes, maxExclusive, minOne);
                RecentBatches.Range want = expected(batches, start, limit, maxBytes, maxExclusive, minOne);
                int oldestHeld = Math.max(0, batches.size() - RecentBatches.CAPACITY);
                boolean reachable = oldestHeld == 0 || start >= batches.get(oldestHeld).baseOffset();
                if (reachable) {
                    assertThat(got).as("read from %d within %d", start, limit).isEqualTo(want);
                    answered++;
                } else {
                    assertThat(got).as("read from %d, before the table's oldest batch", start)
                            .isSameAs(RecentBatches.UNKNOWN_RANGE);
                }
                int at = table.findPosition(start, limit);
                if (reachable) {
                    assertThat(at).isEqualTo(want == null ? RecentBatches.NONE : want.position());
                } else {
                    assertThat(at).isEqualTo(RecentBatches.UNKNOWN);
                }
            }
        }
        assertThat(answered).as("most reads near the end are answered").isGreaterThan(2_500);
    }

    @Test
    void aClearedTableOrOneWithAHoleTellsItCannotAnswer() {
        RecentBatches table = new RecentBatches();
        assertThat(table.read(0, 0, 100, Long.MAX_VALUE, true)).as("empty segment").isNull();
        assertThat(table.findPosition(0, 50)).as("bytes the table never saw").isEqualTo(RecentBatches.UNKNOWN);
        table.add(10, 19, 0, 100);
        table.add(20, 29, 100, 100);
        assertThat(table.read(25, 200, 1_000, Long.MAX_VALUE, true)).isEqualTo(new RecentBatches.Range(100, 100));
        assertThat(table.read(5, 200, 1_000, Long.MAX_VALUE, true))
                .as("an offset before the first batch of the file").isEqualTo(new RecentBatches.Range(0, 200));
        assertThat(table.read(30, 200, 1_000, Long.MAX_VALUE, true)).as("past the end").isNull();
        assertThat(table.read(25, 150, 1_000, Long.MAX_VALUE, true))
                .as("a size that ends inside a batch was not read from this file").isSameAs(RecentBatches.UNKNOWN_RANGE);

        table.clear();
        assertThat(table.read(25, 200, 1_000, Long.MAX_VALUE, true)).isSameAs(RecentBatches.UNKNOWN_RANGE);
        table.add(20, 24, 100, 40);
        assertThat(table.read(22, 140, 1_000, Long.MAX_VALUE, true))
                .as("after a truncation the table holds only what came after it")
                .isEqualTo(new RecentBatches.Range(100, 40));
        assertThat(table.findPosition(12, 140)).as("an earlier batch is not in the table")
                .isEqualTo(RecentBatches.UNKNOWN);

        table.add(30, 39, 500, 100);
        assertThat(table.read(22, 600, 1_000, Long.MAX_VALUE, true))
                .as("a batch not following the one before restarts the table")
                .isSameAs(RecentBatches.UNKNOWN_RANGE);
        assertThat(table.read(35, 600, 1_000, Long.MAX_VALUE, true))
                .as("the restarted table still answers for the batch it holds: no batch before it can hold 35")
                .isEqualTo(new RecentBatches.Range(500, 100));

        table.release();
        assertThat(table.read(35, 600, 1_000, Long.MAX_VALUE, true)).as("released")
                .isSameAs(RecentBatches.UNKNOWN_RANGE);
    }

    @Test
    void readersRacingTheAppenderGetTheTruthOrUnknown() throws Exception {
        // batch i: offsets 10i..10i+9, a size that is a function of i, positions their running sum
        int batchesToWrite = 200_000;
        int[] ends = new int[batchesToWrite];
        int position = 0;
        for (int i = 0; i < batchesToWrite; i++) {
            position += 60 + (i * 37) % 200;
            ends[i] = position;
        }
        RecentBatches table = new RecentBatches();
        AtomicInteger size = new AtomicInteger();      // the file's published size
        AtomicLong written = new AtomicLong();
        AtomicBoolean done = new AtomicBoolean();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<long[]>> readers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                long seed = r;
                readers.add(pool.submit(() -> {
                    Random random = new Random(seed);
                    long answered = 0;
                    long unknown = 0;
                    while (!done.get()) {
                        // the count first: the size it was published after covers every batch counted
                        long count = written.get();
                        int limit = size.get();
                        if (count == 0) {
                            continue;
                        }
                        // a batch among the last few the reader knows of
                        int i = (int) Math.max(0, count - 1 - random.nextInt(RecentBatches.CAPACITY + 8));
                        long start = 10L * i + random.nextInt(10);
                        int maxBytes = 1 + random.nextInt(1_500);
                        RecentBatches.Range got = table.read(start, limit, maxBytes, Long.MAX_VALUE, true);
                        if (got == RecentBatches.UNKNOWN_RANGE) {
                            unknown++;
                            continue;
                        }
                        assertThat(got).as("batch %d exists within %d", i, limit).isNotNull();
                        int first = i == 0 ? 0 : ends[i - 1];
                        assertThat(got.position()).isEqualTo(first);
                        // the answer is whole batches from i on, within the size read, at most maxBytes unless one
                        int end = got.position() + got.size();
                        assertThat(end).isLessThanOrEqualTo(limit);
                        int j = i;
                        while (ends[j] < end) {
                            j++;
                        }
                        assertThat(ends[j]).as("the answer ends at a batch boundary").isEqualTo(end);
                        assertThat(got.size() <= maxBytes || j == i).isTrue();
                        answered++;
                    }
                    return new long[] {answered, unknown};
                }));
            }
            Future<?> writer = pool.submit(() -> {
                for (int i = 0; i < batchesToWrite; i++) {
                    int start = i == 0 ? 0 : ends[i - 1];
                    table.add(10L * i, 10L * i + 9, start, ends[i] - start);
                    size.set(ends[i]);
                    written.set(i + 1);
                }
                done.set(true);
            });
            writer.get(60, TimeUnit.SECONDS);
            long answered = 0;
            for (Future<long[]> reader : readers) {
                answered += reader.get(60, TimeUnit.SECONDS)[0];
            }
            assertThat(answered).as("reads answered from the table while it was written").isPositive();
        } finally {
            done.set(true);
            pool.shutdownNow();
            assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    /** A segment read through the table returns what a scan of its file gives, across truncation and reopen. */
    @Test
    void aSegmentReadsTheSameBatchesAsItsFileHolds() throws IOException {
        Random random = new Random(5);
        LogConfig config = LogConfig.builder().segmentBytes(1 << 24).indexIntervalBytes(512).build();
        LogSegment segment = LogSegment.create(dir, BASE, config, NOW);
        try {
            long next = BASE;
            for (int round = 0; round < 6; round++) {
                for (int n = 0; n < 80; n++) {
                    next = appendRandomBatch(segment, random, next, 4, 300);
                    checkReads(segment, random, next);
                }
                if (round == 2) {
                    segment.close();
                    segment = LogSegment.open(dir, BASE, config, NOW, false);
                    checkReads(segment, random, next);
                } else {
                    long cut = next - 1 - random.nextInt(40);
                    segment.truncateTo(cut);
                    next = segment.nextOffset();
                    checkReads(segment, random, next);
                }
            }
        } finally {
            segment.close();
        }
    }

    /**
     * A read from anywhere in a segment, mostly behind the table, so through the offset index and the file: the
     * batches the index lets the read take without reading their headers are exactly those a scan takes, for
     * every index interval (an entry per batch, one in several, none), size limit and offset bound.
     */
    @Test
    void aReadBehindTheTableTakesTheBatchesAScanWould() throws IOException {
        Random random = new Random(11);
        for (int interval : new int[] {1, 700, 5_000, 1 << 20}) {
            Path segmentDir = dir.resolve("interval-" + interval);
            Files.createDirectories(segmentDir);
            LogConfig config = LogConfig.builder().segmentBytes(1 << 24).indexIntervalBytes(interval).build();
            LogSegment segment = LogSegment.create(segmentDir, BASE, config, NOW);
            try {
                long next = BASE;
                for (int n = 0; n < 400; n++) {
                    next = appendRandomBatch(segment, random, next, 6, 400);
                }
                List<Layout> batches = layout(segment);
                int limit = segment.size();
                for (int q = 0; q < 400; q++) {
                    long start = BASE + random.nextInt((int) (next - BASE) + 2);
                    int maxBytes = 1 + random.nextInt(q % 2 == 0 ? 40_000 : 3_000);
                    long maxExclusive = random.nextInt(3) == 0 ? Long.MAX_VALUE : start + random.nextInt(400);
                    boolean minOne = random.nextBoolean();
                    Records got = segment.read(start, maxBytes, maxExclusive, minOne);
                    RecentBatches.Range want = expected(batches, start, limit, maxBytes, maxExclusive, minOne);
                    String what = "interval " + interval + ", read from " + start + " of " + maxBytes + " bytes below "
                            + maxExclusive + (minOne ? ", min one" : "");
                    if (want == null) {
                        assertThat(got).as(what).isNull();
                        continue;
                    }
                    assertThat(got).as(what).isNotNull();
                    assertThat(got.sizeInBytes()).as(what).isEqualTo(want.size());
                    if (want.size() > 0) {
                        assertThat(got.batches().iterator().next().baseOffset()).as(what)
                                .isEqualTo(batches.stream().filter(b -> b.position() == want.position()).findFirst()
                                        .orElseThrow().baseOffset());
                    }
                }
            } finally {
                segment.close();
            }
        }
    }

    /** Appends a batch of 1 to {@code maxRecords} records of 10 to {@code 10 + maxExtra} bytes at {@code next}; returns the next offset. */
    private static long appendRandomBatch(LogSegment segment, Random random, long next, int maxRecords, int maxExtra)
            throws IOException {
        SimpleRecord[] values = new SimpleRecord[1 + random.nextInt(maxRecords)];
        for (int r = 0; r < values.length; r++) {
            values[r] = new SimpleRecord(NOW, null, new byte[10 + random.nextInt(maxExtra)]);
        }
        segment.append(MemoryRecords.withRecords(next, Compression.NONE, values), NOW);
        return next + values.length;
    }

    private static List<Layout> layout(LogSegment segment) {
        List<Layout> batches = new ArrayList<>();
        for (FileChannelRecordBatch b : segment.records().batches()) {
            batches.add(new Layout(b.baseOffset(), b.lastOffset(), b.position(), b.sizeInBytes()));
        }
        return batches;
    }

    private static void checkReads(LogSegment segment, Random random, long next) {
        List<Layout> batches = layout(segment);
        int limit = segment.size();
        for (int q = 0; q < 10; q++) {
            long start = next - random.nextInt(60) + 1;
            int maxBytes = 1 + random.nextInt(3_000);
            long maxExclusive = random.nextBoolean() ? Long.MAX_VALUE : start + random.nextInt(20);
            boolean minOne = random.nextBoolean();
            Records got = segment.read(start, maxBytes, maxExclusive, minOne);
            RecentBatches.Range want = expected(batches, start, limit, maxBytes, maxExclusive, minOne);
            if (want == null) {
                assertThat(got).as("read from %d", start).isNull();
                continue;
            }
            assertThat(got).as("read from %d", start).isNotNull();
            assertThat(got.sizeInBytes()).as("bytes read from %d", start).isEqualTo(want.size());
            if (want.size() > 0) {
                assertThat(got.batches().iterator().next().baseOffset())
                        .isEqualTo(batches.stream().filter(b -> b.position() == want.position()).findFirst()
                                .orElseThrow().baseOffset());
            }
        }
    }
}
