package dev.skein.broker.storage;

import dev.skein.broker.testing.ManualTime;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.UnsupportedForMessageFormatException;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static dev.skein.broker.storage.TestRecords.batchBaseOffsets;
import static dev.skein.broker.storage.TestRecords.contents;
import static dev.skein.broker.storage.TestRecords.offsets;
import static dev.skein.broker.storage.TestRecords.values;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PartitionLogTest {
    private static final TopicPartition TP = new TopicPartition("orders", 0);

    @TempDir
    Path tmp;

    private final ManualTime time = new ManualTime(1_000_000L);
    private final List<PartitionLog> opened = new ArrayList<>();

    private Path dir() {
        return tmp.resolve("orders-0");
    }

    private static LogConfig small() {
        return LogConfig.builder().segmentBytes(1024).indexIntervalBytes(100).build();
    }

    private PartitionLog open(LogConfig config) throws IOException {
        PartitionLog log = PartitionLog.open(dir(), TP, config, time);
        opened.add(log);
        return log;
    }

    @AfterEach
    void closeAll() throws IOException {
        for (PartitionLog log : opened) {
            log.close();
        }
    }

    private static void appendN(PartitionLog log, int batches, long timestamp) throws IOException {
        for (int i = 0; i < batches; i++) {
            log.appendAsLeader(values(timestamp, "value-" + i), 0);
        }
    }

    private List<Path> files(String suffix) throws IOException {
        try (Stream<Path> s = Files.list(dir())) {
            return s.filter(p -> p.getFileName().toString().endsWith(suffix)).sorted().toList();
        }
    }

    /** Every offset in the log, reading segment by segment as a consumer would. */
    static List<Long> readAll(PartitionLog log) throws IOException {
        List<Long> all = new ArrayList<>();
        long next = log.logStartOffset();
        while (next < log.logEndOffset()) {
            List<Long> got = offsets(log.read(next, 1 << 20, Long.MAX_VALUE, true).records());
            if (got.isEmpty()) {
                break;
            }
            all.addAll(got);
            next = got.get(got.size() - 1) + 1;
        }
        return all;
    }

    // ------------------------------------------------------------------ append / read

    @Test
    void appendAssignsOffsetsEpochAndReadReturnsRecords() throws IOException {
        PartitionLog log = open(small());
        LogAppendInfo first = log.appendAsLeader(values(5L, "a", "b", "c"), 3);
        LogAppendInfo second = log.appendAsLeader(values(7L, "d"), 3);

        assertThat(first.firstOffset()).isZero();
        assertThat(first.lastOffset()).isEqualTo(2);
        assertThat(first.numRecords()).isEqualTo(3);
        assertThat(first.maxTimestamp()).isEqualTo(5L);
        assertThat(first.logAppendTime()).isEqualTo(-1);
        assertThat(second.firstOffset()).isEqualTo(3);
        assertThat(log.logEndOffset()).isEqualTo(4);

        FetchDataInfo fetched = log.read(0, 10_000, Long.MAX_VALUE, false);
        assertThat(fetched.records()).isInstanceOf(FileRecords.class);
        assertThat(contents(fetched.records())).containsExactly("0:k0=a", "1:k1=b", "2:k2=c", "3:k0=d");
        for (RecordBatch batch : fetched.records().batches()) {
            assertThat(batch.partitionLeaderEpoch()).isEqualTo(3);
            batch.ensureValid();
        }
        assertThat(log.latestEpoch()).isEqualTo(3);
    }

    @Test
    void readStartsAtTheBatchContainingTheOffset() throws IOException {
        PartitionLog log = open(small());
        log.appendAsLeader(values(1L, "a", "b", "c"), 0);
        log.appendAsLeader(values(1L, "d", "e"), 0);

        assertThat(batchBaseOffsets(log.read(1, 10_000, Long.MAX_VALUE, false).records())).containsExactly(0L, 3L);
        assertThat(batchBaseOffsets(log.read(4, 10_000, Long.MAX_VALUE, false).records())).containsExactly(3L);
        assertThat(log.read(5, 10_000, Long.MAX_VALUE, false).records().sizeInBytes()).isZero();
    }

    @Test
    void readHonoursMaxBytesAndMinOneMessage() throws IOException {
        PartitionLog log = open(small());
        log.appendAsLeader(values(1L, "a"), 0);
        log.appendAsLeader(values(1L, "b"), 0);
        int batchSize = log.read(0, 10_000, Long.MAX_VALUE, false).records().sizeInBytes() / 2;

        assertThat(batchBaseOffsets(log.read(0, batchSize + 10, Long.MAX_VALUE, false).records())).containsExactly(0L);
        assertThat(log.read(0, batchSize - 1, Long.MAX_VALUE, false).records().sizeInBytes()).isZero();
        assertThat(batchBaseOffsets(log.read(0, batchSize - 1, Long.MAX_VALUE, true).records())).containsExactly(0L);
        assertThat(log.read(0, 2 * batchSize, Long.MAX_VALUE, false).records().sizeInBytes()).isEqualTo(2 * batchSize);
    }

    @Test
    void readNeverReturnsBatchesAtOrAboveTheHighWatermark() throws IOException {
        PartitionLog log = open(small());
        log.appendAsLeader(values(1L, "a", "b"), 0);
        log.appendAsLeader(values(1L, "c", "d"), 0);

        assertThat(offsets(log.read(0, 10_000, 2, false).records())).containsExactly(0L, 1L);
        assertThat(offsets(log.read(0, 10_000, 3, false).records())).containsExactly(0L, 1L);
        assertThat(log.read(0, 10_000, 1, true).records().sizeInBytes()).isZero();
        assertThat(log.read(2, 10_000, 2, true).records().sizeInBytes()).isZero();
    }

    @Test
    void readOutsideTheLogThrowsOffsetOutOfRange() throws IOException {
        PartitionLog log = open(small());
        appendN(log, 3, 1L);
        log.deleteRecordsBefore(1);

        assertThatThrownBy(() -> log.read(0, 100, Long.MAX_VALUE, false)).isInstanceOf(OffsetOutOfRangeException.class);
        assertThatThrownBy(() -> log.read(4, 100, Long.MAX_VALUE, false)).isInstanceOf(OffsetOutOfRangeException.class);
        assertThat(log.read(3, 100, Long.MAX_VALUE, false).records().sizeInBytes()).isZero();
    }

    @Test
    void readSpansSegments() throws IOException {
        PartitionLog log = open(small());
        appendN(log, 40, 1L);
        assertThat(log.numberOfSegments()).isGreaterThan(2);

        List<Long> all = new ArrayList<>();
        long next = 0;
        while (next < log.logEndOffset()) {
            List<Long> got = offsets(log.read(next, 300, Long.MAX_VALUE, true).records());
            assertThat(got).isNotEmpty();
            all.addAll(got);
            next = got.get(got.size() - 1) + 1;
        }
        assertThat(all).hasSize(40).doesNotHaveDuplicates().isSorted();
    }

    @Test
    void everyCompressionTypeIsStoredByteIdentical() throws IOException {
        PartitionLog log = open(LogConfig.defaults());
        List<Compression> compressions = List.of(Compression.NONE, Compression.gzip().build(),
                Compression.snappy().build(), Compression.lz4().build(), Compression.zstd().build());
        for (Compression c : compressions) {
            MemoryRecords batch = values(c, 42L, "one", "two", "three");
            long start = log.logEndOffset();
            log.appendAsLeader(batch, 7);
            byte[] sent = TestRecords.readAll(batch);
            byte[] stored = TestRecords.readAll(log.read(start, 1 << 20, Long.MAX_VALUE, false).records());
            assertThat(stored).as(c.type().name).isEqualTo(sent);
            RecordBatch read = log.read(start, 1 << 20, Long.MAX_VALUE, false).records().batches().iterator().next();
            assertThat(read.compressionType()).isEqualTo(c.type());
            assertThat(contents(log.read(start, 1 << 20, Long.MAX_VALUE, false).records()))
                    .containsExactly(start + ":k0=one", (start + 1) + ":k1=two", (start + 2) + ":k2=three");
        }
    }

    @Test
    void logAppendTimeStampsTheBatch() throws IOException {
        PartitionLog log = open(small().toBuilder().logAppendTime(true).build());
        LogAppendInfo info = log.appendAsLeader(values(Compression.gzip().build(), 5L, "a", "b"), 0);

        assertThat(info.logAppendTime()).isEqualTo(time.milliseconds());
        RecordBatch batch = log.read(0, 10_000, Long.MAX_VALUE, false).records().batches().iterator().next();
        assertThat(batch.timestampType()).isEqualTo(TimestampType.LOG_APPEND_TIME);
        assertThat(batch.maxTimestamp()).isEqualTo(time.milliseconds());
        batch.ensureValid();
    }

    // ------------------------------------------------------------------ validation

    @Test
    void crcCorruptBatchIsRejectedAndNothingWritten() throws IOException {
        PartitionLog log = open(small());
        MemoryRecords good = values(1L, "ok");
        MemoryRecords bad = values(1L, "corrupt-me");
        ByteBuffer buf = bad.buffer();
        buf.put(buf.limit() - 1, (byte) (buf.get(buf.limit() - 1) ^ 0x5a));
        MemoryRecords request = TestRecords.concat(good, MemoryRecords.readableRecords(buf));

        assertThatThrownBy(() -> log.appendAsLeader(request, 0)).isInstanceOf(CorruptRecordException.class);
        assertThat(log.logEndOffset()).isZero();
        assertThat(log.size()).isZero();
    }

    @Test
    void oldMagicIsRejected() throws IOException {
        PartitionLog log = open(small());
        MemoryRecords v1 = MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V1, Compression.NONE, new SimpleRecord(1L, "x".getBytes()));
        assertThatThrownBy(() -> log.appendAsLeader(v1, 0)).isInstanceOf(UnsupportedForMessageFormatException.class);
        assertThat(log.size()).isZero();
    }

    @Test
    void batchLargerThanMaxMessageBytesIsRejected() throws IOException {
        PartitionLog log = open(small().toBuilder().maxMessageBytes(100).fileDeleteDelayMs(0).build());
        assertThatThrownBy(() -> log.appendAsLeader(values(1L, "x".repeat(200)), 0)).isInstanceOf(RecordTooLargeException.class);
        assertThat(log.logEndOffset()).isZero();
    }

    @Test
    void transactionalBatchesAreRejected() throws IOException {
        PartitionLog log = open(small());
        MemoryRecords txn = MemoryRecords.withTransactionalRecords(Compression.NONE, 1L, (short) 0, 0,
                new SimpleRecord("x".getBytes()));
        assertThatThrownBy(() -> log.appendAsLeader(txn, 0)).isInstanceOf(InvalidRecordException.class)
                .hasMessageContaining("transactions are not supported");
    }

    @Test
    void compactedTopicRejectsRecordsWithoutKey() throws IOException {
        PartitionLog log = open(small().toBuilder().cleanupDelete(false).cleanupCompact(true).deleteRetentionMs(1000).build());
        MemoryRecords noKey = MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(1L, "v".getBytes()));
        assertThatThrownBy(() -> log.appendAsLeader(noKey, 0)).isInstanceOf(InvalidRecordException.class)
                .hasMessageContaining("Compacted topic cannot accept message without key");
    }

    // ------------------------------------------------------------------ segments and restart

    @Test
    void rollsBySizeAndKeepsOffsetsAcrossSegments() throws IOException {
        PartitionLog log = open(small());
        appendN(log, 30, 1L);

        assertThat(log.numberOfSegments()).isGreaterThan(1);
        assertThat(files(".log")).hasSize(log.numberOfSegments());
        assertThat(files(".log").get(0).getFileName().toString()).isEqualTo("00000000000000000000.log");
        for (Path p : files(".log")) {
            assertThat(Files.size(p)).isLessThanOrEqualTo(1024);
        }
        assertThat(offsets(log.read(17, 100, Long.MAX_VALUE, true).records())).startsWith(17L);
    }

    @Test
    void rollsByTime() throws IOException {
        PartitionLog log = open(small().toBuilder().segmentBytes(1 << 20).segmentMs(1000).build());
        appendN(log, 2, 1L);
        time.advance(1001);
        appendN(log, 1, 1L);
        assertThat(log.numberOfSegments()).isEqualTo(2);
        assertThat(log.segmentBaseOffsets()).containsExactly(0L, 2L);

        time.advance(1001);
        log.applyRetention(time.milliseconds());
        assertThat(log.segmentBaseOffsets()).containsExactly(0L, 2L, 3L);
    }

    @Test
    void rollsWhenTheIndexIsFull() throws IOException {
        LogConfig cfg = small().toBuilder().segmentBytes(1 << 20).segmentIndexBytes(16).indexIntervalBytes(1)
                .fileDeleteDelayMs(0).build();
        PartitionLog log = open(cfg);
        appendN(log, 10, 1L);
        assertThat(log.numberOfSegments()).isGreaterThan(2);
        assertThat(readAll(log)).hasSize(10);
    }

    @Test
    void restartKeepsDataOffsetsAndEpochs() throws IOException {
        PartitionLog log = open(small());
        appendN(log, 20, 1L);
        log.appendAsLeader(values(1L, "x"), 4);
        int segments = log.numberOfSegments();
        log.close();

        PartitionLog reopened = open(small());
        assertThat(reopened.logEndOffset()).isEqualTo(21);
        assertThat(reopened.numberOfSegments()).isEqualTo(segments);
        assertThat(reopened.latestEpoch()).isEqualTo(4);
        assertThat(readAll(reopened)).hasSize(21);
        assertThat(reopened.appendAsLeader(values(1L, "y"), 4).firstOffset()).isEqualTo(21);
    }

    @Test
    void indexesAreRebuiltAfterIndexFilesAreDeleted() throws IOException {
        PartitionLog log = open(small());
        appendN(log, 30, 1L);
        log.close();
        for (Path p : files(".index")) {
            Files.delete(p);
        }
        for (Path p : files(".timeindex")) {
            Files.delete(p);
        }

        PartitionLog reopened = open(small());
        assertThat(files(".index")).isNotEmpty();
        assertThat(Files.size(files(".index").get(0))).isPositive();
        for (long offset = 0; offset < 30; offset++) {
            assertThat(offsets(reopened.read(offset, 100, Long.MAX_VALUE, true).records())).startsWith(offset);
        }
    }

    // ------------------------------------------------------------------ crash recovery

    /** Appends, then "crashes": handles closed without flush, snapshot or clean-shutdown marker. */
    private PartitionLog crashAfter(int batches) throws IOException {
        PartitionLog log = PartitionLog.open(dir(), TP, small(), time);
        appendN(log, batches, 1L);
        log.closeWithoutMarker();
        return log;
    }

    private Path lastLogFile() throws IOException {
        List<Path> logs = files(".log");
        return logs.get(logs.size() - 1);
    }

    @Test
    void recoveryTruncatesTornTailAndRebuildsIndexes() throws IOException {
        crashAfter(12);
        Path last = lastLogFile();
        long size = Files.size(last);
        try (RandomAccessFile f = new RandomAccessFile(last.toFile(), "rw")) {
            f.setLength(size - 7);
        }

        PartitionLog log = open(small());
        assertThat(log.logEndOffset()).isEqualTo(11);
        assertThat(readAll(log)).hasSize(11);
        assertThat(log.appendAsLeader(values(1L, "after"), 0).firstOffset()).isEqualTo(11);
        assertThat(contents(log.read(11, 1000, Long.MAX_VALUE, false).records())).containsExactly("11:k0=after");
    }

    @Test
    void recoveryDropsGarbageAppendedAfterTheLastBatch() throws IOException {
        crashAfter(5);
        Path last = lastLogFile();
        long size = Files.size(last);
        byte[] garbage = new byte[100];
        Arrays.fill(garbage, (byte) 0x37);
        Files.write(last, garbage, java.nio.file.StandardOpenOption.APPEND);

        PartitionLog log = open(small());
        assertThat(log.logEndOffset()).isEqualTo(5);
        assertThat(Files.size(last)).isEqualTo(size);
    }

    @Test
    void recoveryDropsABatchWithAFlippedByte() throws IOException {
        crashAfter(5);
        Path last = lastLogFile();
        long size = Files.size(last);
        try (RandomAccessFile f = new RandomAccessFile(last.toFile(), "rw")) {
            f.seek(size - 3);
            int b = f.read();
            f.seek(size - 3);
            f.write(b ^ 0xff);
        }

        PartitionLog log = open(small());
        assertThat(log.logEndOffset()).isEqualTo(4);
        for (RecordBatch batch : log.read(0, 1 << 20, Long.MAX_VALUE, false).records().batches()) {
            batch.ensureValid();
        }
    }

    @Test
    void corruptionInAnEarlierSegmentDropsAllLaterSegments() throws IOException {
        crashAfter(30);
        List<Path> logs = files(".log");
        assertThat(logs.size()).isGreaterThan(2);
        Files.delete(dir().resolve(PartitionCheckpoint.FILE));
        Path second = logs.get(1);
        try (RandomAccessFile f = new RandomAccessFile(second.toFile(), "rw")) {
            f.seek(f.length() - 2);
            int b = f.read();
            f.seek(f.length() - 2);
            f.write(b ^ 0xff);
        }

        PartitionLog log = open(small());
        assertThat(log.numberOfSegments()).isEqualTo(2);
        assertThat(files(".log")).hasSize(2);
        assertThat(readAll(log)).hasSize((int) log.logEndOffset());
    }

    // ------------------------------------------------------------------ timestamps

    @Test
    void offsetForTimestampFindsFirstRecordAtOrAfter() throws IOException {
        PartitionLog log = open(small());
        for (int i = 0; i < 30; i++) {
            log.appendAsLeader(values(100L * i, "a", "b"), 2);
        }
        var found = log.offsetForTimestamp(1050L).orElseThrow();
        assertThat(found.offset).isEqualTo(22);
        assertThat(found.timestamp).isEqualTo(1100L);
        assertThat(found.leaderEpoch).contains(2);
        assertThat(log.offsetForTimestamp(0L).orElseThrow().offset).isZero();
        assertThat(log.offsetForTimestamp(1100L).orElseThrow().offset).isEqualTo(22);
        assertThat(log.offsetForTimestamp(100_000L)).isEmpty();

        var max = log.maxTimestampAndOffset().orElseThrow();
        assertThat(max.timestamp).isEqualTo(2900L);
        assertThat(max.offset).isEqualTo(58);
    }

    @Test
    void offsetForTimestampFindsARecordInsideABatch() throws IOException {
        PartitionLog log = open(small());
        MemoryRecords batch = MemoryRecords.withRecords(Compression.lz4().build(),
                new SimpleRecord(10L, "k".getBytes(), "a".getBytes()),
                new SimpleRecord(30L, "k".getBytes(), "b".getBytes()),
                new SimpleRecord(20L, "k".getBytes(), "c".getBytes()));
        log.appendAsLeader(batch, 0);
        assertThat(log.offsetForTimestamp(15L).orElseThrow().offset).isEqualTo(1);
        assertThat(log.maxTimestampAndOffset().orElseThrow().offset).isEqualTo(1);
    }

    // ------------------------------------------------------------------ delete records / retention

    @Test
    void deleteRecordsBeforeIsPersistedAcrossRestart() throws IOException {
        PartitionLog log = open(small());
        appendN(log, 30, 1L);
        int before = log.numberOfSegments();
        assertThat(log.deleteRecordsBefore(17)).isEqualTo(17);
        assertThat(log.numberOfSegments()).isLessThan(before);
        assertThat(offsets(log.read(17, 100, Long.MAX_VALUE, true).records())).startsWith(17L);
        assertThatThrownBy(() -> log.deleteRecordsBefore(31)).isInstanceOf(OffsetOutOfRangeException.class);
        log.close();

        PartitionLog reopened = open(small());
        assertThat(reopened.logStartOffset()).isEqualTo(17);
        assertThatThrownBy(() -> reopened.read(16, 100, Long.MAX_VALUE, false)).isInstanceOf(OffsetOutOfRangeException.class);
    }

    @Test
    void retentionByTimeDeletesExpiredSegmentsAndRollsAnExpiredActiveSegment() throws IOException {
        PartitionLog log = open(small().toBuilder().retentionMs(10_000).retentionBytes(-1).build());
        long t0 = time.milliseconds();
        appendN(log, 20, t0);
        int oldSegments = log.numberOfSegments();
        time.advance(5_000);
        appendN(log, 20, time.milliseconds());

        time.advance(6_000);
        int deleted = log.applyRetention(time.milliseconds());
        assertThat(deleted).isGreaterThanOrEqualTo(oldSegments - 1);
        assertThat(log.logStartOffset()).isPositive().isLessThanOrEqualTo(20);

        time.advance(10_000);
        log.applyRetention(time.milliseconds());
        assertThat(log.logStartOffset()).isEqualTo(40);
        assertThat(log.logEndOffset()).isEqualTo(40);
        assertThat(log.numberOfSegments()).isEqualTo(1);
        assertThat(log.read(40, 100, Long.MAX_VALUE, false).records().sizeInBytes()).isZero();
        assertThat(log.appendAsLeader(values(1L, "z"), 0).firstOffset()).isEqualTo(40);
    }

    @Test
    void retentionBySizeKeepsTheLogUnderTheLimit() throws IOException {
        PartitionLog log = open(small().toBuilder().retentionMs(-1).retentionBytes(2048).build());
        appendN(log, 60, 1L);
        long sizeBefore = log.size();
        int deleted = log.applyRetention(time.milliseconds());
        assertThat(deleted).isPositive();
        assertThat(log.size()).isLessThan(sizeBefore);
        assertThat(log.size() - 2048).as("over the limit by less than the oldest remaining segment")
                .isLessThan(log.read(log.logStartOffset(), 1 << 20, Long.MAX_VALUE, false).records().sizeInBytes());
        assertThat(log.logStartOffset()).isEqualTo(log.segmentBaseOffsets().get(0));
    }

    @Test
    void retentionDoesNothingWithoutDeletePolicy() throws IOException {
        PartitionLog log = open(small().toBuilder().retentionMs(1).retentionBytes(1).cleanupDelete(false).cleanupCompact(true)
                .deleteRetentionMs(0).build());
        for (int i = 0; i < 30; i++) {
            log.appendAsLeader(TestRecords.keyed(1L, "k=v" + i), 0);
        }
        time.advance(1_000);
        assertThat(log.applyRetention(time.milliseconds())).isZero();
        assertThat(log.logStartOffset()).isZero();
    }

    @Test
    void deletedSegmentFilesAreRemovedAfterTheDelay() throws IOException {
        PartitionLog log = open(small().toBuilder().retentionMs(-1).retentionBytes(1024).build());
        appendN(log, 60, 1L);
        log.applyRetention(time.milliseconds());
        assertThat(files(".deleted")).isNotEmpty();
        time.advance(60_001);
        log.applyRetention(time.milliseconds());
        assertThat(files(".deleted")).isEmpty();
    }

    // ------------------------------------------------------------------ flush

    @Test
    void flushMessagesTriggersFsyncAndAdvancesRecoveryPoint() throws IOException {
        PartitionLog log = open(small().toBuilder().flushMessages(3).flushMs(Long.MAX_VALUE).build());
        log.appendAsLeader(values(1L, "a", "b"), 0);
        assertThat(log.recoveryPoint()).isZero();
        log.appendAsLeader(values(1L, "c"), 0);
        assertThat(log.recoveryPoint()).isEqualTo(3);
    }

    @Test
    void flushMsFlushesWhenDue() throws IOException {
        PartitionLog log = open(small().toBuilder().flushMessages(Long.MAX_VALUE).flushMs(1000).build());
        log.appendAsLeader(values(1L, "a"), 0);
        log.maybeFlush(time.milliseconds());
        assertThat(log.recoveryPoint()).isZero();
        time.advance(1000);
        log.maybeFlush(time.milliseconds());
        assertThat(log.recoveryPoint()).isEqualTo(1);
    }

    // ------------------------------------------------------------------ truncation and epochs

    @Test
    void truncateToDropsEverythingFromTheOffset() throws IOException {
        PartitionLog log = open(small());
        appendN(log, 10, 1L);
        log.appendAsLeader(values(1L, "x", "y"), 5);
        appendN(log, 20, 1L);
        log.truncateTo(12);
        assertThat(log.logEndOffset()).isEqualTo(12);
        assertThat(log.latestEpoch()).isEqualTo(5);
        log.truncateTo(10);
        assertThat(log.latestEpoch()).isEqualTo(0);
        assertThat(readAll(log)).hasSize(10);
        assertThat(log.appendAsLeader(values(1L, "z"), 6).firstOffset()).isEqualTo(10);
    }

    @Test
    void truncateFullyAndStartAtResetsTheLog() throws IOException {
        PartitionLog log = open(small());
        appendN(log, 30, 1L);
        log.truncateFullyAndStartAt(100);
        assertThat(log.logStartOffset()).isEqualTo(100);
        assertThat(log.logEndOffset()).isEqualTo(100);
        assertThat(log.numberOfSegments()).isEqualTo(1);
        assertThat(log.latestEpoch()).isEqualTo(-1);
        assertThat(log.appendAsLeader(values(1L, "a"), 1).firstOffset()).isEqualTo(100);
        log.close();
        PartitionLog reopened = open(small());
        assertThat(reopened.logStartOffset()).isEqualTo(100);
        assertThat(reopened.logEndOffset()).isEqualTo(101);
    }

    @Test
    void endOffsetForEpochFollowsKafkaSemantics() throws IOException {
        PartitionLog log = open(small());
        assertThat(log.endOffsetForEpoch(0)).isEqualTo(new EpochEndOffset(-1, -1));
        log.appendAsLeader(values(1L, "a", "b"), 1);
        log.appendAsLeader(values(1L, "c"), 3);
        log.appendAsLeader(values(1L, "d"), 5);

        assertThat(log.endOffsetForEpoch(5)).isEqualTo(new EpochEndOffset(5, 4));
        assertThat(log.endOffsetForEpoch(4)).isEqualTo(new EpochEndOffset(3, 3));
        assertThat(log.endOffsetForEpoch(3)).isEqualTo(new EpochEndOffset(3, 3));
        assertThat(log.endOffsetForEpoch(1)).isEqualTo(new EpochEndOffset(1, 2));
        assertThat(log.endOffsetForEpoch(0)).isEqualTo(new EpochEndOffset(0, 0));
        assertThat(log.endOffsetForEpoch(6)).isEqualTo(new EpochEndOffset(-1, -1));
    }

    @Test
    void followerAppendKeepsOffsetsAndRejectsGoingBackwards() throws IOException {
        PartitionLog log = open(small());
        MemoryRecords fromLeader = MemoryRecords.withRecords(5L, Compression.NONE, 2,
                new SimpleRecord(1L, "k".getBytes(), "a".getBytes()), new SimpleRecord(1L, "k".getBytes(), "b".getBytes()));
        LogAppendInfo info = log.appendAsFollower(fromLeader);
        assertThat(info.firstOffset()).isEqualTo(5);
        assertThat(log.logEndOffset()).isEqualTo(7);
        assertThat(log.latestEpoch()).isEqualTo(2);
        assertThat(offsets(log.read(5, 1000, Long.MAX_VALUE, false).records())).containsExactly(5L, 6L);

        MemoryRecords stale = MemoryRecords.withRecords(6L, Compression.NONE, 2, new SimpleRecord("x".getBytes()));
        assertThatThrownBy(() -> log.appendAsFollower(stale)).isInstanceOf(InvalidRecordException.class);
    }

    @Test
    void readsRunConcurrentlyWithAppends() throws Exception {
        PartitionLog log = open(small());
        Thread writer = new Thread(() -> {
            try {
                appendN(log, 300, 1L);
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        writer.start();
        long next = 0;
        while (next < 300) {
            long end = log.logEndOffset();
            if (next < end) {
                for (RecordBatch batch : log.read(next, 500, end, true).records().batches()) {
                    batch.ensureValid();
                    assertThat(batch.baseOffset()).isEqualTo(next);
                    next = batch.lastOffset() + 1;
                }
            }
            Thread.onSpinWait();
        }
        writer.join();
        assertThat(next).isEqualTo(300);
    }

    @Test
    void followerAcceptsEmptyBatchesLeftByCompaction() throws IOException {
        PartitionLog log = open(small());
        ByteBuffer buf = ByteBuffer.allocate(org.apache.kafka.common.record.DefaultRecordBatch.RECORD_BATCH_OVERHEAD);
        org.apache.kafka.common.record.DefaultRecordBatch.writeEmptyHeader(buf, RecordBatch.MAGIC_VALUE_V2, 9L, (short) 0,
                0, 0L, 4L, 1, TimestampType.CREATE_TIME, 1L, false, false);
        log.appendAsFollower(MemoryRecords.readableRecords(buf.flip()));
        assertThat(log.logEndOffset()).isEqualTo(5);
        assertThat(log.producerState().entry(9L)).isPresent();
    }

    @Test
    void readFromAnOffsetInsideTheFirstBatchAfterDeleteRecordsReturnsThatBatch() throws IOException {
        PartitionLog log = open(small());
        log.appendAsLeader(values(1L, "a", "b", "c"), 0);
        log.deleteRecordsBefore(1);
        assertThat(offsets(log.read(1, 1000, Long.MAX_VALUE, false).records())).containsExactly(0L, 1L, 2L);
    }

    /**
     * Reads further back than {@link RecentBatches} reaches scan the segment file's batch headers, from an index
     * entry or from the last indexed batch within the read: every start offset, byte limit and bound is answered as
     * the batches appended say it must be, in a segment written in this run and again after a restart.
     */
    @Test
    void readsThatScanTheFileAnswerAsTheAppendedBatchesSay() throws IOException {
        LogConfig config = LogConfig.builder().segmentBytes(1 << 20).indexIntervalBytes(300).build();
        PartitionLog log = open(config);
        List<long[]> batches = new ArrayList<>(); // base offset, last offset, size
        for (int i = 0; i < 3 * RecentBatches.CAPACITY; i++) {
            String[] values = new String[1 + i % 4];
            Arrays.fill(values, "v".repeat(1 + (i * 37) % 90));
            MemoryRecords records = values(1L, values);
            LogAppendInfo info = log.appendAsLeader(records, 0);
            batches.add(new long[] {info.firstOffset(), info.lastOffset(), records.sizeInBytes()});
        }
        PartitionLog reading = log;
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1) {
                reading = reopen(log, config);
            }
            long end = reading.logEndOffset();
            for (long start = 0; start < end; start += 3) {
                for (int maxBytes : new int[] {1, 200, 700, 5_000}) {
                    for (long bound : new long[] {end, end - 7, start + 5}) {
                        for (boolean minOne : new boolean[] {false, true}) {
                            List<Long> expected = expectedBaseOffsets(batches, start, maxBytes, Math.min(bound, end), minOne);
                            assertThat(batchBaseOffsets(reading.read(start, maxBytes, bound, minOne).records()))
                                    .as("read(%d, %d, %d, %s)", start, maxBytes, bound, minOne)
                                    .isEqualTo(expected);
                        }
                    }
                }
            }
        }
    }

    private PartitionLog reopen(PartitionLog log, LogConfig config) throws IOException {
        log.close();
        opened.remove(log);
        return open(config);
    }

    /** What {@link PartitionLog#read} must return, as batch base offsets, from the batches appended. */
    private static List<Long> expectedBaseOffsets(List<long[]> batches, long start, int maxBytes, long bound, boolean minOne) {
        List<Long> out = new ArrayList<>();
        if (start >= bound) {
            return out;
        }
        long total = 0;
        for (long[] b : batches) {
            if (b[1] < start) {
                continue;
            }
            if (b[1] >= bound || (total + b[2] > maxBytes && !(total == 0 && minOne))) {
                break;
            }
            out.add(b[0]);
            total += b[2];
            if (total >= maxBytes) {
                break;
            }
        }
        return out;
    }

    @Test
    void aBatchHeaderDamagedUnderAnOpenLogFailsTheReadWithTheFileNamedAndLeavesTheLogAlone() throws IOException {
        PartitionLog log = open(LogConfig.builder().segmentBytes(1 << 20).indexIntervalBytes(1 << 20).build());
        appendN(log, 2 * RecentBatches.CAPACITY, 1L);
        int batchSize = log.read(0, 1, Long.MAX_VALUE, true).records().sizeInBytes();
        Path file = lastLogFile();
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(3L * batchSize + 16); // the magic byte of the fourth batch
            f.write(1);
        }
        // the scan from the segment's start passes the fourth batch's header to reach offset 5
        assertThatThrownBy(() -> log.read(5, 1000, Long.MAX_VALUE, true))
                .isInstanceOf(CorruptRecordException.class)
                .hasMessageContaining(file.getFileName().toString())
                .hasMessageContaining("magic 1");
        assertThat(offsets(log.read(0, 3 * batchSize, Long.MAX_VALUE, true).records())).containsExactly(0L, 1L, 2L);
        assertThat(log.logEndOffset()).isEqualTo(2L * RecentBatches.CAPACITY);
    }
}
