package dev.skein.broker.server;

import dev.skein.broker.metadata.PartitionRegistration;
import dev.skein.broker.storage.LogConfig;
import dev.skein.broker.storage.PartitionLog;
import dev.skein.broker.testing.ManualTime;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;

/** Where a replica's high watermark starts when its partition is opened (at start-up). */
class PartitionHighWatermarkTest {
    private static final TopicPartition TP = new TopicPartition("t", 0);
    @TempDir
    Path dir;

    private PartitionLog logWithTenRecords() throws Exception {
        PartitionLog log = PartitionLog.open(dir.resolve("t-0"), TP, LogConfig.defaults(), new ManualTime());
        for (int i = 0; i < 10; i++) {
            log.appendAsLeader(MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(("v" + i).getBytes())), 0);
        }
        return log;
    }

    private static PartitionRegistration followerOf(int leader) {
        return new PartitionRegistration(List.of(leader, 1), List.of(leader, 1), leader, 3, 5, List.of(), List.of());
    }

    @Test
    void aReplicaStartsFromItsCheckpointedWatermarkClampedToItsLog() throws Exception {
        try (PartitionLog log = logWithTenRecords()) {
            assertThat(new Partition(TP, Uuid.randomUuid(), log, followerOf(2), 1, 0, OptionalLong.of(7)).highWatermark())
                    .isEqualTo(7);
            // a checkpoint ahead of the log (it was truncated since) is capped at the log end
            assertThat(new Partition(TP, Uuid.randomUuid(), log, followerOf(2), 1, 0, OptionalLong.of(25)).highWatermark())
                    .isEqualTo(10);
            // without a checkpoint the watermark is learnt again from the log start
            assertThat(new Partition(TP, Uuid.randomUuid(), log, followerOf(2), 1, 0, OptionalLong.empty()).highWatermark())
                    .isZero();
            // as the leader it starts there too, and only goes up from it
            Partition leader = new Partition(TP, Uuid.randomUuid(), log, followerOf(1), 1, 0, OptionalLong.of(7));
            assertThat(leader.isLeader()).isTrue();
            assertThat(leader.highWatermark()).isEqualTo(7);
        }
    }
}
