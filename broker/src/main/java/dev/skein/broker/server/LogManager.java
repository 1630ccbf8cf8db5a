package dev.skein.broker.server;

import dev.skein.broker.storage.CleanResult;
import dev.skein.broker.storage.LogCleaner;
import dev.skein.broker.storage.LogConfig;
import dev.skein.broker.storage.HighWatermarkCheckpoint;
import dev.skein.broker.storage.PartitionLog;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Owns the partition logs on this broker's log dirs: finds them at start-up, creates and deletes
 * them as topics come and go, and runs retention, flushing and compaction when the broker's
 * scheduler calls {@link #runRetention}, {@link #runFlush} and {@link #runCleaner}.
 *
 * <p>Each partition directory {@code <topic>-<partition>} holds a {@code partition.metadata} file
 * with the topic id, so a directory left by a deleted topic is never mistaken for a new topic of the
 * same name.
 */
public final class LogManager implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LogManager.class);
    private static final Pattern PARTITION_DIR = Pattern.compile("^(.+)-(\\d+)$");
    private static final String PARTITION_METADATA = "partition.metadata";

    private final List<Path> logDirs;
    private final Time time;
    private final Map<TopicPartition, PartitionLog> logs = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Path> found = new HashMap<>();
    private final Map<TopicPartition, Path> dirs = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Long> checkpointedHighWatermarks = new ConcurrentHashMap<>();
    private final LogCleaner cleaner;

    public LogManager(List<Path> logDirs, Time time) {
        this.logDirs = List.copyOf(logDirs);
        this.time = time;
        this.cleaner = new LogCleaner();
    }

    /** Lists the partition directories already on disk (opened lazily by {@link #getOrCreate}). */
    public void scan() throws IOException {
        for (Path dir : logDirs) {
            Files.createDirectories(dir);
            checkpointedHighWatermarks.putAll(HighWatermarkCheckpoint.read(dir));
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
                for (Path p : entries) {
                    Matcher m = PARTITION_DIR.matcher(p.getFileName().toString());
                    if (Files.isDirectory(p) && m.matches()) {
                        found.put(new TopicPartition(m.group(1), Integer.parseInt(m.group(2))), p);
                    }
                }
            }
        }
    }

    /** The high watermark checkpointed for {@code tp} before this start, if any. */
    public OptionalLong checkpointedHighWatermark(TopicPartition tp) {
        Long hw = checkpointedHighWatermarks.get(tp);
        return hw == null ? OptionalLong.empty() : OptionalLong.of(hw);
    }

    /** Writes every log dir's {@link HighWatermarkCheckpoint} from {@code highWatermarks} (partitions of other dirs ignored). */
    public synchronized void checkpointHighWatermarks(Map<TopicPartition, Long> highWatermarks) {
        Map<Path, Map<TopicPartition, Long>> byDir = new HashMap<>();
        for (Path dir : logDirs) {
            byDir.put(dir, new HashMap<>());
        }
        highWatermarks.forEach((tp, hw) -> {
            Path partitionDir = dirs.get(tp);
            if (partitionDir != null && byDir.containsKey(partitionDir.getParent())) {
                byDir.get(partitionDir.getParent()).put(tp, hw);
            }
        });
        byDir.forEach((dir, hws) -> {
            try {
                HighWatermarkCheckpoint.write(dir, hws);
            } catch (IOException e) {
                log.warn("Could not write the high-watermark checkpoint of {}: {}", dir, e.toString());
            }
        });
    }

    /** Partitions found on disk at start-up that belong to no topic in the metadata (deleted while down). */
    public Collection<TopicPartition> foundOnDisk() {
        return List.copyOf(found.keySet());
    }

    public PartitionLog getOrCreate(TopicPartition tp, Uuid topicId, LogConfig config) throws IOException {
        PartitionLog existing = logs.get(tp);
        if (existing != null) {
            return existing;
        }
        synchronized (this) {
            existing = logs.get(tp);
            if (existing != null) {
                return existing;
            }
            Path dir = found.remove(tp);
            if (dir != null && !topicId.equals(readTopicId(dir).orElse(topicId))) {
                log.info("Deleting {}: it belongs to an earlier topic of the same name", dir);
                PartitionLog stale = PartitionLog.open(dir, tp, config, time);
                stale.delete();
                dir = null;
            }
            if (dir == null) {
                dir = chooseDir().resolve(tp.topic() + "-" + tp.partition());
            }
            PartitionLog opened = PartitionLog.open(dir, tp, config, time);
            writeTopicId(dir, topicId);
            logs.put(tp, opened);
            dirs.put(tp, dir);
            return opened;
        }
    }

    public Optional<PartitionLog> get(TopicPartition tp) {
        return Optional.ofNullable(logs.get(tp));
    }

    /** Deletes a partition's log, whether open or only found on disk. */
    public synchronized void delete(TopicPartition tp) throws IOException {
        PartitionLog l = logs.remove(tp);
        dirs.remove(tp);
        if (l != null) {
            l.delete();
            return;
        }
        Path dir = found.remove(tp);
        if (dir != null) {
            PartitionLog.open(dir, tp, dev.skein.broker.storage.LogConfig.defaults(), time).delete();
        }
    }

    private Path chooseDir() {
        if (logDirs.size() == 1) {
            return logDirs.getFirst();
        }
        Map<Path, Integer> counts = new HashMap<>();
        logDirs.forEach(d -> counts.put(d, 0));
        for (Path dir : dirs.values()) {
            for (Path d : logDirs) {
                if (dir.startsWith(d)) {
                    counts.merge(d, 1, Integer::sum);
                }
            }
        }
        return logDirs.stream().min((a, b) -> Integer.compare(counts.get(a), counts.get(b))).orElseThrow();
    }

    private static Optional<Uuid> readTopicId(Path dir) {
        Path f = dir.resolve(PARTITION_METADATA);
        try {
            for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                if (line.startsWith("topic_id:")) {
                    return Optional.of(Uuid.fromString(line.substring("topic_id:".length()).trim()));
                }
            }
        } catch (IOException | IllegalArgumentException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }

    private static void writeTopicId(Path dir, Uuid topicId) throws IOException {
        Path f = dir.resolve(PARTITION_METADATA);
        if (readTopicId(dir).filter(topicId::equals).isPresent()) {
            return;
        }
        Path tmp = dir.resolve(PARTITION_METADATA + ".tmp");
        Files.writeString(tmp, "version: 0\ntopic_id: " + topicId + "\n", StandardCharsets.UTF_8);
        Files.move(tmp, f, java.nio.file.StandardCopyOption.ATOMIC_MOVE, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }

    public Collection<PartitionLog> all() {
        return logs.values();
    }

    /** Applies retention to every log; returns the number of segments deleted. */
    public int runRetention() {
        int deleted = 0;
        long now = time.milliseconds();
        for (PartitionLog l : new ArrayList<>(logs.values())) {
            try {
                deleted += l.applyRetention(now);
            } catch (IOException | RuntimeException e) {
                log.warn("Retention of {} failed: {}", l.topicPartition(), e.toString());
            }
        }
        return deleted;
    }

    public void runFlush() {
        long now = time.milliseconds();
        for (PartitionLog l : new ArrayList<>(logs.values())) {
            try {
                l.maybeFlush(now);
            } catch (IOException | RuntimeException e) {
                log.warn("Flush of {} failed: {}", l.topicPartition(), e.toString());
            }
        }
    }

    /** Compacts the dirtiest log that is due; returns true if one was cleaned. */
    public boolean runCleaner() {
        PartitionLog dirtiest = null;
        double worst = 0;
        for (PartitionLog l : logs.values()) {
            if (!l.config().cleanupCompact()) {
                continue;
            }
            double ratio = l.dirtyRatio();
            if (ratio >= l.config().minCleanableDirtyRatio() && ratio > worst) {
                dirtiest = l;
                worst = ratio;
            }
        }
        if (dirtiest == null) {
            return false;
        }
        try {
            CleanResult r = cleaner.clean(dirtiest, time.milliseconds());
            log.debug("Cleaned {}: {}", dirtiest.topicPartition(), r);
            return true;
        } catch (IOException | RuntimeException e) {
            log.warn("Cleaning {} failed: {}", dirtiest.topicPartition(), e.toString());
            return false;
        }
    }

    @Override
    public synchronized void close() {
        for (PartitionLog l : logs.values()) {
            try {
                l.close();
            } catch (IOException e) {
                log.warn("Closing {} failed: {}", l.topicPartition(), e.toString());
            }
        }
        logs.clear();
    }
}
