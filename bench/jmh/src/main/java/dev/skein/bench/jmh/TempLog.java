package dev.skein.bench.jmh;

import dev.skein.broker.storage.LogConfig;
import dev.skein.broker.storage.PartitionLog;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** A partition log in a temp dir (on tmpfs when /dev/shm exists, to measure the code, not the disk). */
final class TempLog implements AutoCloseable {
    final Path dir;
    final PartitionLog log;
    final Time time = Time.SYSTEM;

    TempLog() throws IOException {
        Path shm = Path.of("/dev/shm");
        Path parent = Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
        dir = Files.createTempDirectory(parent, "skein-jmh-");
        // file.delete.delay.ms 0: a truncated log's files leave tmpfs at once (see AppendBenchmark.dropData)
        LogConfig config = LogConfig.defaults().toBuilder().segmentBytes(256 * 1024 * 1024).fileDeleteDelayMs(0).build();
        log = PartitionLog.open(dir.resolve("bench-0"), new TopicPartition("bench", 0), config, time);
    }

    @Override
    public void close() throws IOException {
        log.close();
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
