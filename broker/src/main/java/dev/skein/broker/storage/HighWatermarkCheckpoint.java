package dev.skein.broker.storage;

import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The high watermarks of a log dir's partitions, in Kafka's {@code replication-offset-checkpoint}
 * form: a version line ({@code 0}), a count line, then {@code topic partition offset} per line.
 * Written atomically every {@code replica.high.watermark.checkpoint.interval.ms} and at shutdown, so
 * a restarted replica starts from a committed watermark instead of its log start. A watermark is
 * only ever a committed offset, so an old checkpoint is safe, just conservative. A file that cannot
 * be read is ignored with a warning: the watermark is then learnt again, nothing is lost.
 */
public final class HighWatermarkCheckpoint {
    public static final String FILE = "replication-offset-checkpoint";
    private static final Logger log = LoggerFactory.getLogger(HighWatermarkCheckpoint.class);

    private HighWatermarkCheckpoint() {
    }

    public static Map<TopicPartition, Long> read(Path logDir) {
        Path file = logDir.resolve(FILE);
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (NoSuchFileException e) {
            return Map.of();
        } catch (IOException e) {
            log.warn("Ignoring {}: {}", file, e.toString());
            return Map.of();
        }
        try {
            if (lines.size() < 2 || !lines.get(0).trim().equals("0")) {
                throw new IllegalArgumentException("expected version 0 and a count");
            }
            int count = Integer.parseInt(lines.get(1).trim());
            if (lines.size() - 2 < count) {
                throw new IllegalArgumentException("expected " + count + " entries, found " + (lines.size() - 2));
            }
            Map<TopicPartition, Long> out = new HashMap<>();
            for (int i = 2; i < 2 + count; i++) {
                String[] f = lines.get(i).trim().split(" ");
                if (f.length != 3) {
                    throw new IllegalArgumentException("line " + (i + 1) + " is not 'topic partition offset'");
                }
                out.put(new TopicPartition(f[0], Integer.parseInt(f[1])), Long.parseLong(f[2]));
            }
            return out;
        } catch (RuntimeException e) {
            log.warn("Ignoring malformed {}: {}", file, e.getMessage());
            return Map.of();
        }
    }

    public static void write(Path logDir, Map<TopicPartition, Long> highWatermarks) throws IOException {
        StringBuilder sb = new StringBuilder("0\n").append(highWatermarks.size()).append('\n');
        Map<String, Long> sorted = new TreeMap<>();
        highWatermarks.forEach((tp, hw) -> sorted.put(tp.topic() + " " + tp.partition(), hw));
        sorted.forEach((tp, hw) -> sb.append(tp).append(' ').append(hw).append('\n'));
        Checkpoints.writeAtomically(logDir.resolve(FILE), sb.toString());
    }
}
