package dev.skein.broker.storage;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.NavigableMap;
import java.util.stream.Stream;

/**
 * Opens a partition log's directory, recovering it after an unclean shutdown: completes or rolls back file
 * operations a crash interrupted ({@code .swap}, {@code .cleaned}, {@code .deleted}, {@code .tmp}), opens the
 * segments (re-validating every segment that may hold data past the recovery point and cutting the log at the
 * first torn or corrupt batch, dropping the segments after it), rebuilds producer state and leader epochs,
 * persists the result as the new checkpoint and removes the clean-shutdown marker. Runs before the log is
 * published, so it takes no lock.
 */
final class LogLoader {
    /** The offsets of a freshly loaded log; its recovery point is the log end offset. */
    record LoadedLog(long logStartOffset, long logEndOffset, long cleanerCheckpoint) {
    }

    private final Path dir;
    private final LogConfig config;
    private final NavigableMap<Long, LogSegment> segments;
    private final LeaderEpochCache epochCache;
    private final ProducerSnapshots snapshots;

    /** Loads into {@code segments} (empty) and {@code epochCache}; producer state is rebuilt via {@code snapshots}. */
    LogLoader(Path dir, LogConfig config, NavigableMap<Long, LogSegment> segments, LeaderEpochCache epochCache,
              ProducerSnapshots snapshots) {
        this.dir = dir;
        this.config = config;
        this.segments = segments;
        this.epochCache = epochCache;
        this.snapshots = snapshots;
    }

    LoadedLog load(long now) throws IOException {
        boolean clean = Files.exists(dir.resolve(PartitionLog.CLEAN_SHUTDOWN));
        boolean swapsCompleted = completeInterruptedOperations();
        PartitionCheckpoint cp = PartitionCheckpoint.read(dir);
        long checkpointRecovery = clean && !swapsCompleted ? Long.MAX_VALUE : cp.recoveryPoint();

        openSegments(checkpointRecovery, now);
        // a partition just created: no segment, no checkpoint, nothing written that could need recovery
        boolean fresh = segments.isEmpty() && !Files.exists(dir.resolve(PartitionCheckpoint.FILE));
        if (segments.isEmpty()) {
            long start = Math.max(0, cp.logStartOffset());
            segments.put(start, LogSegment.create(dir, start, config, now));
        }
        long logEndOffset = segments.lastEntry().getValue().nextOffset();
        long logStartOffset = Math.min(Math.max(cp.logStartOffset(), segments.firstKey()), logEndOffset);
        long cleanerCheckpoint = Math.min(Math.max(cp.cleanerCheckpoint(), logStartOffset), logEndOffset);
        epochCache.load(cp.epochs());
        epochCache.truncateFromEnd(logEndOffset);
        epochCache.truncateFromStart(logStartOffset);

        boolean recovered = !clean || swapsCompleted;
        // A fresh log's files are empty: the directory fsync of the checkpoint write below makes them
        // durable. Fsyncing each of them cost three fsyncs per partition on every topic creation.
        if (recovered && !fresh) {
            for (LogSegment s : segments.values()) {
                s.flush();
            }
        }
        long snapshotLimit = recovered ? Math.min(cp.recoveryPoint(), logEndOffset) : logEndOffset;
        snapshots.rebuild(segments, logStartOffset, logEndOffset, snapshotLimit, recovered);
        new PartitionCheckpoint(logStartOffset, logEndOffset, cleanerCheckpoint, epochCache.entries()).write(dir);
        // the checkpoint write fsynced the directory after everything above; only this removal comes later
        if (Files.deleteIfExists(dir.resolve(PartitionLog.CLEAN_SHUTDOWN))) {
            Checkpoints.fsyncDirectory(dir);
        }
        return new LoadedLog(logStartOffset, logEndOffset, cleanerCheckpoint);
    }

    /**
     * Opens the segments in order, validating those that may hold data at or past {@code recoveryPoint}; once a
     * segment had to be cut, the segments after it are deleted.
     */
    private void openSegments(long recoveryPoint, long now) throws IOException {
        List<Long> bases = listSegmentBases();
        boolean truncated = false;
        for (int i = 0; i < bases.size(); i++) {
            long base = bases.get(i);
            if (truncated) {
                LogSegment.deleteFiles(dir, base);
                continue;
            }
            long nextBase = i + 1 < bases.size() ? bases.get(i + 1) : Long.MAX_VALUE;
            boolean recover = nextBase > recoveryPoint;
            LogSegment segment = LogSegment.open(dir, base, config, now, recover);
            if (!segments.isEmpty()) {
                // only the active segment, the last one, keeps the table of its recent batches
                segments.lastEntry().getValue().forgetRecentBatches();
            }
            segments.put(base, segment);
            if (segment.truncatedBytes > 0) {
                truncated = true;
            }
        }
    }

    /**
     * Finishes or rolls back file operations a crash interrupted: a {@code .swap} log (cleaned segment fully
     * written and renamed) replaces its original; {@code .cleaned}, {@code .deleted} and {@code .tmp} files are
     * removed. Returns whether any swap was completed (those segments then need recovery).
     */
    private boolean completeInterruptedOperations() throws IOException {
        boolean swapped = false;
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.sorted().toList();
        }
        for (Path p : files) {
            String name = p.getFileName().toString();
            if (name.endsWith(LogSegment.LOG_SUFFIX + PartitionLog.SWAP_SUFFIX)) {
                String baseName = name.substring(0, name.length() - PartitionLog.SWAP_SUFFIX.length() - LogSegment.LOG_SUFFIX.length());
                Files.deleteIfExists(dir.resolve(baseName + LogSegment.INDEX_SUFFIX));
                Files.deleteIfExists(dir.resolve(baseName + LogSegment.TIME_INDEX_SUFFIX));
                Files.move(p, dir.resolve(baseName + LogSegment.LOG_SUFFIX), StandardCopyOption.ATOMIC_MOVE,
                        StandardCopyOption.REPLACE_EXISTING);
                swapped = true;
            } else if (name.endsWith(PartitionLog.CLEANED_SUFFIX) || name.endsWith(PartitionLog.DELETED_SUFFIX)
                    || name.endsWith(".tmp") || name.endsWith(PartitionLog.SWAP_SUFFIX)) {
                Files.deleteIfExists(p);
            }
        }
        return swapped;
    }

    private List<Long> listSegmentBases() throws IOException {
        List<Long> bases = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                String name = p.getFileName().toString();
                if (name.endsWith(LogSegment.LOG_SUFFIX) && name.length() == 20 + LogSegment.LOG_SUFFIX.length()) {
                    try {
                        bases.add(Long.parseLong(name.substring(0, 20)));
                    } catch (NumberFormatException ignored) {
                        // not a segment file
                    }
                }
            }
        }
        bases.sort(Comparator.naturalOrder());
        return bases;
    }
}
