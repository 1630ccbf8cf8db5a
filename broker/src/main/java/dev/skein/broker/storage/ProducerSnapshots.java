package dev.skein.broker.storage;

import org.apache.kafka.common.record.RecordBatch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.NavigableMap;
import java.util.stream.Stream;

/**
 * The producer-state snapshot files ({@code <offset>.snapshot}) of one partition log, and rebuilding producer
 * state (and, after a crash, missing leader epochs) from the newest usable snapshot plus the batches after it.
 * Called by {@link PartitionLog} under its lock.
 */
final class ProducerSnapshots {
    private static final int SNAPSHOTS_TO_KEEP = 3;

    private final Path dir;
    private final ProducerStateManager producerState;
    private final LeaderEpochCache epochCache;

    ProducerSnapshots(Path dir, ProducerStateManager producerState, LeaderEpochCache epochCache) {
        this.dir = dir;
        this.producerState = producerState;
        this.epochCache = epochCache;
    }

    /**
     * Rebuilds producer state and (with {@code scanEpochs}) missing leader epochs: starts from the newest intact
     * snapshot at or below {@code snapshotLimit}, then applies the batch headers after it (headers only, nothing
     * is decompressed). Without a usable snapshot the whole log is scanned. Snapshots above the log end offset
     * are deleted.
     */
    void rebuild(NavigableMap<Long, LogSegment> segments, long logStartOffset, long logEndOffset,
                 long snapshotLimit, boolean scanEpochs) throws IOException {
        producerState.clear();
        long from = segments.firstKey();
        for (long offset : offsets().reversed()) {
            if (offset <= snapshotLimit && producerState.loadSnapshot(dir, offset)) {
                from = offset;
                break;
            }
        }
        for (long offset : offsets()) {
            if (offset > logEndOffset) {
                Files.deleteIfExists(file(offset));
            }
        }
        if (from >= logEndOffset && !scanEpochs) {
            return;
        }
        Long floor = segments.floorKey(from);
        for (LogSegment segment : segments.tailMap(floor == null ? segments.firstKey() : floor, true).values()) {
            for (RecordBatch batch : segment.records().batches()) {
                if (batch.lastOffset() >= from) {
                    producerState.loadBatch(batch);
                }
                if (scanEpochs && batch.lastOffset() >= logStartOffset) {
                    epochCache.assign(batch.partitionLeaderEpoch(),
                            Math.max(batch.baseOffset(), logStartOffset));
                }
            }
        }
    }

    /** Writes a snapshot of the current producer state at {@code offset}, keeping only the newest few. */
    void take(long offset) throws IOException {
        producerState.writeSnapshot(dir, offset);
        List<Long> offsets = offsets();
        for (int i = 0; i < offsets.size() - SNAPSHOTS_TO_KEEP; i++) {
            Files.deleteIfExists(file(offsets.get(i)));
        }
    }

    void deleteAll() throws IOException {
        for (long offset : offsets()) {
            Files.deleteIfExists(file(offset));
        }
    }

    private Path file(long offset) {
        return dir.resolve(LogSegment.fileName(offset, ProducerStateManager.SNAPSHOT_SUFFIX));
    }

    private List<Long> offsets() throws IOException {
        List<Long> offsets = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                String name = p.getFileName().toString();
                if (name.endsWith(ProducerStateManager.SNAPSHOT_SUFFIX) && name.length() == 20 + ProducerStateManager.SNAPSHOT_SUFFIX.length()) {
                    offsets.add(Long.parseLong(name.substring(0, 20)));
                }
            }
        }
        offsets.sort(Comparator.naturalOrder());
        return offsets;
    }
}
