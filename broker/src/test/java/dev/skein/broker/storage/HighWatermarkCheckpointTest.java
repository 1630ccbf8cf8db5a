package dev.skein.broker.storage;

import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class HighWatermarkCheckpointTest {
    @TempDir
    Path dir;

    @Test
    void writesKafkasFormatAndReadsItBack() throws Exception {
        Map<TopicPartition, Long> hws = Map.of(new TopicPartition("orders", 0), 42L,
                new TopicPartition("orders", 1), 0L, new TopicPartition("__consumer_offsets", 7), 1_000_000_000_000L);
        HighWatermarkCheckpoint.write(dir, hws);
        assertThat(Files.readAllLines(dir.resolve(HighWatermarkCheckpoint.FILE)))
                .containsExactly("0", "3", "__consumer_offsets 7 1000000000000", "orders 0 42", "orders 1 0");
        assertThat(HighWatermarkCheckpoint.read(dir)).isEqualTo(hws);
    }

    @Test
    void aMissingOrMalformedFileReadsAsNoCheckpoint() throws Exception {
        assertThat(HighWatermarkCheckpoint.read(dir)).isEmpty();
        Path file = dir.resolve(HighWatermarkCheckpoint.FILE);
        for (String content : new String[]{"", "1\n1\norders 0 5\n", "0\n2\norders 0 5\n", "0\n1\norders 0\n",
                "0\n1\norders zero 5\n", "0\nmany\n"}) {
            Files.writeString(file, content);
            assertThat(HighWatermarkCheckpoint.read(dir)).as("content %s", content).isEmpty();
        }
    }
}
