package dev.skein.broker.storage;

import dev.skein.broker.testing.ManualTime;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static dev.skein.broker.storage.TestRecords.idempotent;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ProducerStateTest {
    private static final TopicPartition TP = new TopicPartition("payments", 3);
    private static final long PID = 4242L;

    @TempDir
    Path tmp;

    private final ManualTime time = new ManualTime(5_000L);
    private final List<PartitionLog> opened = new ArrayList<>();

    private PartitionLog open() throws IOException {
        PartitionLog log = PartitionLog.open(tmp.resolve("payments-3"), TP,
                LogConfig.builder().segmentBytes(1024).indexIntervalBytes(100).build(), time);
        opened.add(log);
        return log;
    }

    @AfterEach
    void closeAll() throws IOException {
        for (PartitionLog log : opened) {
            log.close();
        }
    }

    @Test
    void retriedBatchIsDetectedAsDuplicateAndNotWritten() throws IOException {
        PartitionLog log = open();
        log.appendAsLeader(idempotent(PID, (short) 0, 0, "a", "b"), 0);
        log.appendAsLeader(idempotent(PID, (short) 0, 2, "c"), 0);
        long size = log.size();

        LogAppendInfo dup = log.appendAsLeader(idempotent(PID, (short) 0, 0, "a", "b"), 0);
        assertThat(dup.duplicate()).isTrue();
        assertThat(dup.firstOffset()).isZero();
        assertThat(dup.lastOffset()).isEqualTo(1);
        assertThat(log.size()).isEqualTo(size);
        assertThat(log.logEndOffset()).isEqualTo(3);
    }

    @Test
    void onlyTheLastFiveBatchesAreRemembered() throws IOException {
        PartitionLog log = open();
        for (int seq = 0; seq < 6; seq++) {
            log.appendAsLeader(idempotent(PID, (short) 0, seq, "v" + seq), 0);
        }
        assertThat(log.appendAsLeader(idempotent(PID, (short) 0, 1, "v1"), 0).duplicate()).isTrue();
        assertThatThrownBy(() -> log.appendAsLeader(idempotent(PID, (short) 0, 0, "v0"), 0))
                .isInstanceOf(OutOfOrderSequenceException.class);
    }

    @Test
    void theLastFiveBatchesAreKeptOldestFirstAcrossManyAppendsAndARestart() throws IOException {
        PartitionLog log = open();
        for (int seq = 0; seq < 12; seq++) {
            log.appendAsLeader(idempotent(PID, (short) 0, seq, "v" + seq), 0);
        }
        assertThat(log.producerState().entry(PID).orElseThrow().batches())
                .extracting(ProducerStateManager.BatchMetadata::firstSeq).containsExactly(7, 8, 9, 10, 11);
        log.close();
        opened.clear();

        PartitionLog reopened = open();
        assertThat(reopened.producerState().entry(PID).orElseThrow().batches())
                .extracting(ProducerStateManager.BatchMetadata::firstSeq).containsExactly(7, 8, 9, 10, 11);
        assertThat(reopened.appendAsLeader(idempotent(PID, (short) 0, 7, "v7"), 0).duplicate()).isTrue();
    }

    @Test
    void batchesOfTwoProducersInOneAppendAreEachCheckedAndKept() throws IOException {
        long other = PID + 1;
        PartitionLog log = open();
        log.appendAsLeader(TestRecords.concat(idempotent(PID, (short) 0, 0, "a"), idempotent(other, (short) 3, 0, "x"),
                idempotent(PID, (short) 0, 1, "b"), idempotent(other, (short) 3, 1, "y")), 0);
        assertThat(log.producerState().entry(PID).orElseThrow().last().orElseThrow().lastSeq()).isEqualTo(1);
        assertThat(log.producerState().entry(other).orElseThrow().producerEpoch()).isEqualTo((short) 3);
        assertThat(log.producerState().entry(other).orElseThrow().last().orElseThrow().lastSeq()).isEqualTo(1);

        // the second producer's gap refuses the whole append, and neither producer's state moves
        assertThatThrownBy(() -> log.appendAsLeader(TestRecords.concat(idempotent(PID, (short) 0, 2, "c"),
                idempotent(other, (short) 3, 5, "z")), 0)).isInstanceOf(OutOfOrderSequenceException.class);
        assertThat(log.producerState().entry(PID).orElseThrow().last().orElseThrow().lastSeq()).isEqualTo(1);
        assertThat(log.logEndOffset()).isEqualTo(4);
    }

    @Test
    void sequenceGapIsOutOfOrder() throws IOException {
        PartitionLog log = open();
        log.appendAsLeader(idempotent(PID, (short) 0, 0, "a"), 0);
        assertThatThrownBy(() -> log.appendAsLeader(idempotent(PID, (short) 0, 2, "c"), 0))
                .isInstanceOf(OutOfOrderSequenceException.class);
        assertThat(log.logEndOffset()).isEqualTo(1);
    }

    @Test
    void olderEpochIsFencedAndNewEpochMustStartAtZero() throws IOException {
        PartitionLog log = open();
        log.appendAsLeader(idempotent(PID, (short) 3, 0, "a"), 0);
        assertThatThrownBy(() -> log.appendAsLeader(idempotent(PID, (short) 2, 1, "b"), 0))
                .isInstanceOf(InvalidProducerEpochException.class);
        assertThatThrownBy(() -> log.appendAsLeader(idempotent(PID, (short) 4, 5, "b"), 0))
                .isInstanceOf(OutOfOrderSequenceException.class);
        assertThat(log.appendAsLeader(idempotent(PID, (short) 4, 0, "b"), 0).firstOffset()).isEqualTo(1);
        assertThat(log.producerState().entry(PID).orElseThrow().producerEpoch()).isEqualTo((short) 4);
    }

    @Test
    void unknownProducerIsAcceptedAtAnySequence() throws IOException {
        PartitionLog log = open();
        assertThat(log.appendAsLeader(idempotent(PID, (short) 0, 17, "a"), 0).duplicate()).isFalse();
        assertThat(log.appendAsLeader(idempotent(PID, (short) 0, 18, "b"), 0).firstOffset()).isEqualTo(1);
    }

    @Test
    void sequenceWrapsAroundAtIntMax() throws IOException {
        PartitionLog log = open();
        log.appendAsLeader(idempotent(PID, (short) 0, Integer.MAX_VALUE, "a"), 0);
        assertThat(log.appendAsLeader(idempotent(PID, (short) 0, 0, "b"), 0).firstOffset()).isEqualTo(1);
    }

    @Test
    void severalBatchesOfOneProducerInOneRequestAreChecked() throws IOException {
        PartitionLog log = open();
        log.appendAsLeader(TestRecords.concat(idempotent(PID, (short) 0, 0, "a"), idempotent(PID, (short) 0, 1, "b")), 0);
        assertThat(log.logEndOffset()).isEqualTo(2);
        assertThatThrownBy(() -> log.appendAsLeader(
                TestRecords.concat(idempotent(PID, (short) 0, 2, "c"), idempotent(PID, (short) 0, 4, "e")), 0))
                .isInstanceOf(OutOfOrderSequenceException.class);
        assertThat(log.logEndOffset()).isEqualTo(2);
        assertThat(log.producerState().entry(PID).orElseThrow().last().orElseThrow().lastSeq()).isEqualTo(1);
    }

    @Test
    void stateSurvivesCleanRestartViaSnapshot() throws IOException {
        PartitionLog log = open();
        for (int seq = 0; seq < 30; seq++) {
            log.appendAsLeader(idempotent(PID, (short) 1, seq, "value-" + seq), 0);
        }
        log.close();
        try (Stream<Path> s = Files.list(tmp.resolve("payments-3"))) {
            assertThat(s.filter(p -> p.toString().endsWith(".snapshot")).count()).isPositive();
        }

        PartitionLog reopened = open();
        assertThat(reopened.appendAsLeader(idempotent(PID, (short) 1, 29, "value-29"), 0).duplicate()).isTrue();
        assertThatThrownBy(() -> reopened.appendAsLeader(idempotent(PID, (short) 1, 31, "x"), 0))
                .isInstanceOf(OutOfOrderSequenceException.class);
        assertThat(reopened.appendAsLeader(idempotent(PID, (short) 1, 30, "x"), 0).firstOffset()).isEqualTo(30);
    }

    @Test
    void stateIsRebuiltFromTheLogAfterACrash() throws IOException {
        PartitionLog log = open();
        for (int seq = 0; seq < 30; seq++) {
            log.appendAsLeader(idempotent(PID, (short) 1, seq, "value-" + seq), 0);
        }
        log.closeWithoutMarker();
        opened.remove(log);
        try (Stream<Path> s = Files.list(tmp.resolve("payments-3"))) {
            for (Path p : s.filter(p -> p.toString().endsWith(".snapshot")).toList()) {
                Files.delete(p);
            }
        }

        PartitionLog reopened = open();
        LogAppendInfo dup = reopened.appendAsLeader(idempotent(PID, (short) 1, 28, "value-28"), 0);
        assertThat(dup.duplicate()).isTrue();
        assertThat(dup.firstOffset()).isEqualTo(28);
        assertThatThrownBy(() -> reopened.appendAsLeader(idempotent(PID, (short) 0, 30, "x"), 0))
                .isInstanceOf(InvalidProducerEpochException.class);
    }

    @Test
    void truncationRewindsProducerState() throws IOException {
        PartitionLog log = open();
        for (int seq = 0; seq < 10; seq++) {
            log.appendAsLeader(idempotent(PID, (short) 0, seq, "v" + seq), 0);
        }
        log.truncateTo(6);
        assertThat(log.producerState().entry(PID).orElseThrow().last().orElseThrow().lastSeq()).isEqualTo(5);
        assertThat(log.appendAsLeader(idempotent(PID, (short) 0, 6, "again"), 0).duplicate()).isFalse();
    }

    @Test
    void stateIsRebuiltFromTheLatestFlushedSnapshotPlusTheTailAfterACrash() throws IOException {
        PartitionLog log = PartitionLog.open(tmp.resolve("payments-3"), TP,
                LogConfig.builder().segmentBytes(512).indexIntervalBytes(100).flushMessages(1).flushMs(Long.MAX_VALUE).build(), time);
        for (int seq = 0; seq < 40; seq++) {
            log.appendAsLeader(idempotent(PID, (short) 2, seq, "value-" + seq), 0);
        }
        assertThat(log.numberOfSegments()).isGreaterThan(2);
        log.closeWithoutMarker();
        try (Stream<Path> s = Files.list(tmp.resolve("payments-3"))) {
            assertThat(s.filter(p -> p.toString().endsWith(".snapshot")).count()).isPositive();
        }

        PartitionLog reopened = open();
        assertThat(reopened.appendAsLeader(idempotent(PID, (short) 2, 39, "value-39"), 0).firstOffset()).isEqualTo(39);
        assertThat(reopened.appendAsLeader(idempotent(PID, (short) 2, 40, "next"), 0).firstOffset()).isEqualTo(40);
    }
}
