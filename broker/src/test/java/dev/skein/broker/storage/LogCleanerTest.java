package dev.skein.broker.storage;

import dev.skein.broker.testing.ManualTime;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static dev.skein.broker.storage.TestRecords.bytes;
import static dev.skein.broker.storage.TestRecords.contents;
import static dev.skein.broker.storage.TestRecords.keyed;
import static org.assertj.core.api.Assertions.assertThat;

class LogCleanerTest {
    private static final TopicPartition TP = new TopicPartition("profiles", 0);
    private static final long DELETE_RETENTION_MS = 60_000;

    @TempDir
    Path tmp;

    private final ManualTime time = new ManualTime(10_000_000L);
    private final LogCleaner cleaner = new LogCleaner();
    private final List<PartitionLog> opened = new ArrayList<>();

    private Path dir() {
        return tmp.resolve("profiles-0");
    }

    private static LogConfig compacted() {
        return LogConfig.builder().segmentBytes(600).indexIntervalBytes(100)
                .cleanupDelete(false).cleanupCompact(true).deleteRetentionMs(DELETE_RETENTION_MS).build();
    }

    private PartitionLog open() throws IOException {
        PartitionLog log = PartitionLog.open(dir(), TP, compacted(), time);
        opened.add(log);
        return log;
    }

    @AfterEach
    void closeAll() throws IOException {
        for (PartitionLog log : opened) {
            log.close();
        }
    }

    /** All records from the log start, reading batch by batch: "offset:key=value". */
    private static List<String> everything(PartitionLog log) throws IOException {
        List<String> out = new ArrayList<>();
        long next = log.logStartOffset();
        while (next < log.logEndOffset()) {
            var records = log.read(next, 1 << 20, Long.MAX_VALUE, true).records();
            if (records.sizeInBytes() == 0) {
                break;
            }
            out.addAll(contents(records));
            for (RecordBatch b : records.batches()) {
                next = b.lastOffset() + 1;
            }
        }
        return out;
    }

    /** The latest value per key, as a consumer of the full log would compute it. */
    private static Map<String, String> latest(List<String> records) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String r : records) {
            String kv = r.substring(r.indexOf(':') + 1);
            String[] p = kv.split("=", 2);
            if (p[1].equals("null")) {
                m.remove(p[0]);
            } else {
                m.put(p[0], p[1]);
            }
        }
        return m;
    }

    private void writeUpdates(PartitionLog log, int rounds) throws IOException {
        for (int round = 0; round < rounds; round++) {
            for (int key = 0; key < 5; key++) {
                log.appendAsLeader(keyed(time.milliseconds(), "key" + key + "=v" + round), 0);
            }
        }
    }

    @Test
    void keepsOnlyTheLatestRecordPerKeyWithOffsetsPreserved() throws IOException {
        PartitionLog log = open();
        writeUpdates(log, 10);
        log.roll();
        List<String> before = everything(log);
        assertThat(log.dirtyRatio()).isEqualTo(1.0);

        CleanResult result = cleaner.clean(log, time.milliseconds());

        List<String> after = everything(log);
        assertThat(result.segmentsCleaned()).isPositive();
        assertThat(result.recordsRemoved()).isEqualTo(45);
        assertThat(result.bytesAfter()).isLessThan(result.bytesBefore());
        assertThat(after).containsExactly("45:key0=v9", "46:key1=v9", "47:key2=v9", "48:key3=v9", "49:key4=v9");
        assertThat(latest(after)).isEqualTo(latest(before));
        assertThat(log.dirtyRatio()).isZero();
        assertThat(log.cleanerCheckpoint()).isEqualTo(50);
        assertThat(log.logEndOffset()).isEqualTo(50);
    }

    @Test
    void fetchFromARemovedOffsetReturnsTheNextBatch() throws IOException {
        PartitionLog log = open();
        writeUpdates(log, 4);
        log.roll();
        cleaner.clean(log, time.milliseconds());

        var records = log.read(3, 1 << 20, Long.MAX_VALUE, false).records();
        assertThat(records.batches().iterator().next().baseOffset()).isGreaterThan(3);
        assertThat(contents(records).get(0)).startsWith("15:");
    }

    @Test
    void activeSegmentAndRecentRecordsAreNotCleaned() throws IOException {
        LogConfig cfg = compacted().toBuilder().minCompactionLagMs(30_000).minCleanableDirtyRatio(0.5).build();
        PartitionLog log = PartitionLog.open(dir(), TP, cfg, time);
        opened.add(log);
        writeUpdates(log, 4);
        log.roll();
        time.advance(40_000);
        writeUpdates(log, 4);
        log.roll();
        writeUpdates(log, 1);

        cleaner.clean(log, time.milliseconds());
        List<String> after = everything(log);
        assertThat(after.stream().filter(r -> r.contains("=v0")).count()).as("second wave too young").isEqualTo(10);
        assertThat(log.cleanerCheckpoint()).isLessThan(40);
    }

    @Test
    void tombstonesAreKeptUntilDeleteRetentionThenRemoved() throws IOException {
        PartitionLog log = open();
        writeUpdates(log, 2);
        log.appendAsLeader(keyed(time.milliseconds(), "key0=null"), 0);
        log.roll();

        cleaner.clean(log, time.milliseconds());
        assertThat(everything(log)).contains("10:key0=null").noneMatch(r -> r.contains(":key0=v"));

        log.appendAsLeader(keyed(time.milliseconds(), "key1=later"), 0);
        log.roll();
        time.advance(DELETE_RETENTION_MS - 1);
        cleaner.clean(log, time.milliseconds());
        assertThat(everything(log)).contains("10:key0=null");

        log.appendAsLeader(keyed(time.milliseconds(), "other=x"), 0);
        log.roll();
        time.advance(2);
        cleaner.clean(log, time.milliseconds());
        assertThat(everything(log)).noneMatch(r -> r.contains("key0=null")).contains("11:key1=later", "12:other=x");
    }

    @Test
    void compressedBatchesAreCompactedAndStayCompressed() throws IOException {
        PartitionLog log = open();
        for (int round = 0; round < 6; round++) {
            log.appendAsLeader(MemoryRecords.withRecords(Compression.zstd().build(),
                    new SimpleRecord(time.milliseconds(), bytes("a"), bytes("a" + round)),
                    new SimpleRecord(time.milliseconds(), bytes("b"), bytes("b" + round))), 0);
        }
        log.roll();
        cleaner.clean(log, time.milliseconds());
        var records = log.read(0, 1 << 20, Long.MAX_VALUE, false).records();
        assertThat(contents(records)).containsExactly("10:a=a5", "11:b=b5");
        for (RecordBatch b : records.batches()) {
            b.ensureValid();
            assertThat(b.compressionType().name).isEqualTo("zstd");
        }
    }

    @Test
    void cleanedLogSurvivesRestart() throws IOException {
        PartitionLog log = open();
        writeUpdates(log, 10);
        log.roll();
        cleaner.clean(log, time.milliseconds());
        List<String> after = everything(log);
        log.close();

        PartitionLog reopened = open();
        assertThat(everything(reopened)).isEqualTo(after);
        assertThat(reopened.cleanerCheckpoint()).isEqualTo(50);
        assertThat(reopened.appendAsLeader(keyed(1L, "key0=new"), 0).firstOffset()).isEqualTo(50);
    }

    private List<Path> files(String suffix) throws IOException {
        try (Stream<Path> s = Files.list(dir())) {
            return s.filter(p -> p.getFileName().toString().endsWith(suffix)).toList();
        }
    }

    @Test
    void swapInterruptedAfterTheCommitPointIsCompletedOnRecovery() throws IOException {
        PartitionLog log = open();
        writeUpdates(log, 10);
        log.roll();
        cleaner.clean(log, time.milliseconds(), LogCleaner.StopAt.AFTER_SWAP_RENAME);
        assertThat(files(".swap")).isNotEmpty();
        log.closeWithoutMarker();
        opened.remove(log);

        PartitionLog reopened = open();
        assertThat(files(".swap")).isEmpty();
        assertThat(everything(reopened)).containsExactly("45:key0=v9", "46:key1=v9", "47:key2=v9", "48:key3=v9", "49:key4=v9");
    }

    @Test
    void swapInterruptedBeforeTheCommitPointIsRolledBack() throws IOException {
        PartitionLog log = open();
        writeUpdates(log, 10);
        log.roll();
        List<String> before = everything(log);
        cleaner.clean(log, time.milliseconds(), LogCleaner.StopAt.AFTER_CLEANED_FILES);
        assertThat(files(".cleaned")).isNotEmpty();
        log.closeWithoutMarker();
        opened.remove(log);

        PartitionLog reopened = open();
        assertThat(files(".cleaned")).isEmpty();
        assertThat(everything(reopened)).isEqualTo(before);
    }

    @Test
    void lastBatchOfAnIdempotentProducerIsRetainedForDuplicateDetection() throws IOException {
        PartitionLog log = open();
        long pid = 77;
        for (int seq = 0; seq < 3; seq++) {
            log.appendAsLeader(MemoryRecords.withIdempotentRecords(Compression.NONE, pid, (short) 0, seq,
                    new SimpleRecord(time.milliseconds(), bytes("k"), bytes("p" + seq))), 0);
        }
        writeUpdates(log, 1);
        log.appendAsLeader(keyed(time.milliseconds(), "k=overwritten"), 0);
        log.roll();
        cleaner.clean(log, time.milliseconds());
        log.close();

        PartitionLog reopened = open();
        LogAppendInfo dup = reopened.appendAsLeader(MemoryRecords.withIdempotentRecords(Compression.NONE, pid, (short) 0, 2,
                new SimpleRecord(time.milliseconds(), bytes("k"), bytes("p2"))), 0);
        assertThat(dup.duplicate()).isTrue();
        assertThat(dup.firstOffset()).isEqualTo(2);
    }
}
