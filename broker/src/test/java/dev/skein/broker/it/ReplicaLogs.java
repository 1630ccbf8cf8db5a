package dev.skein.broker.it;

import dev.skein.broker.checker.LogHistory;
import dev.skein.broker.storage.LogConfig;
import dev.skein.broker.storage.PartitionLog;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.utils.Time;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** Reads a replica's log from disk (its broker stopped) into a {@link LogHistory}, for the checker. */
final class ReplicaLogs {
    private ReplicaLogs() {
    }

    /** Records every record of {@code topic-partition} under {@code logDir} as read by {@code reader}. */
    static void read(LogHistory history, String reader, Path logDir, String topic, int partition) throws IOException {
        Path dir = logDir.resolve(topic + "-" + partition);
        assertThat(Files.isDirectory(dir)).as("%s holds partition %d", reader, partition).isTrue();
        try (PartitionLog log = PartitionLog.open(dir, new TopicPartition(topic, partition), LogConfig.defaults(), Time.SYSTEM)) {
            long offset = log.logStartOffset();
            long end = log.logEndOffset();
            while (offset < end) {
                long next = offset;
                for (RecordBatch batch : log.read(offset, 1 << 20, end, true).records().batches()) {
                    for (Record r : batch) {
                        if (r.offset() >= offset) {
                            history.read(reader, partition, r.offset(), StandardCharsets.UTF_8.decode(r.value()).toString());
                        }
                    }
                    next = batch.nextOffset();
                }
                if (next == offset) {
                    break;
                }
                offset = next;
            }
        }
    }
}
