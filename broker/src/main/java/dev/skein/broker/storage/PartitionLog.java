package dev.skein.broker.storage;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.record.FileRecords.TimestampAndOffset;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.common.utils.Time;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Stream;

/**
 * One partition's durable log: a directory {@code <logDir>/<topic>-<partition>/} of segments
 * {@code <20-digit baseOffset>.log} with sparse {@code .index} and {@code .timeindex} files, plus
 * {@code partition.checkpoint} (log start offset, recovery point, cleaner checkpoint, leader epochs),
 * producer-state {@code <offset>.snapshot} files and a {@code clean.shutdown} marker written by {@link #close()}.
 *
 * <p>Guarantees: an append of one request is written entirely or not at all (an I/O failure cuts the segment
 * back); after an unclean shutdown everything from the recovery point on is re-validated (CRC, offsets) and cut
 * at the first torn or corrupt batch, so a corrupt batch is never served. Appends, truncation, rolling, retention
 * and segment replacement are serialized on an internal lock; reads take no lock and see only fully written
 * batches. No thread is started: the broker calls {@link #applyRetention}, {@link #maybeFlush} and
 * {@link LogCleaner#clean} on its own schedule.
 *
 * <p>This class owns the log's state and lock and coordinates its parts: {@link LogLoader} (opening and crash
 * recovery), {@link AppendValidator} and {@link AppendBatches} (checking and stamping appended batches),
 * {@link LogReader} (the lock-free read path), {@link RetentionPolicy} and {@link PendingDeletes} (which segments
 * to delete, and their delayed file removal) and {@link ProducerSnapshots} (producer-state snapshot files).
 */
public final class PartitionLog implements Closeable {
    static final String CLEAN_SHUTDOWN = "clean.shutdown";
    static final String DELETED_SUFFIX = ".deleted";
    static final String CLEANED_SUFFIX = ".cleaned";
    static final String SWAP_SUFFIX = ".swap";

    private final Path dir;
    private final TopicPartition topicPartition;
    private final Time time;
    private final ReentrantLock lock = new ReentrantLock();
    private final ConcurrentSkipListMap<Long, LogSegment> segments = new ConcurrentSkipListMap<>();
    private final ProducerStateManager producerState = new ProducerStateManager();
    private final LeaderEpochCache epochCache = new LeaderEpochCache();
    private final ProducerSnapshots snapshots;
    private final PendingDeletes pendingDeletes = new PendingDeletes();
    private volatile LogConfig config;
    private volatile long logEndOffset;
    private volatile long logStartOffset;
    private volatile long recoveryPoint;
    private volatile long cleanerCheckpoint;
    private volatile long lastFlushMs;
    private long unflushedMessages;
    private boolean closed;

    private PartitionLog(Path dir, TopicPartition tp, LogConfig config, Time time) {
        this.dir = dir;
        this.topicPartition = tp;
        this.config = config;
        this.time = time;
        this.snapshots = new ProducerSnapshots(dir, producerState, epochCache);
    }

    /** Opens (creating if absent) the log in {@code dir}, recovering it if the last shutdown was not clean. */
    public static PartitionLog open(Path dir, TopicPartition tp, LogConfig config, Time time) throws IOException {
        Files.createDirectories(dir);
        PartitionLog log = new PartitionLog(dir, tp, config, time);
        log.load();
        return log;
    }

    private void load() throws IOException {
        long now = time.milliseconds();
        LogLoader.LoadedLog loaded = new LogLoader(dir, config, segments, epochCache, snapshots).load(now);
        logStartOffset = loaded.logStartOffset();
        logEndOffset = loaded.logEndOffset();
        recoveryPoint = loaded.logEndOffset();
        cleanerCheckpoint = loaded.cleanerCheckpoint();
        lastFlushMs = now;
    }

    private void writeCheckpoint() throws IOException {
        new PartitionCheckpoint(logStartOffset, recoveryPoint, cleanerCheckpoint, epochCache.entries()).write(dir);
    }

    public TopicPartition topicPartition() {
        return topicPartition;
    }

    public LogConfig config() {
        return config;
    }

    public void updateConfig(LogConfig config) {
        this.config = config;
    }

    Path dir() {
        return dir;
    }

    Time time() {
        return time;
    }

    // ---------------------------------------------------------------------------------------------- appends

    /** Leader append: validates, assigns offsets, leader epoch (and LogAppendTime) in place, then writes. */
    public LogAppendInfo appendAsLeader(MemoryRecords records, int leaderEpoch) throws IOException {
        lock.lock();
        try {
            ensureOpen();
            LogConfig cfg = config;
            List<MutableRecordBatch> batches = AppendValidator.validate(records, cfg, true, topicPartition);
            long now = time.milliseconds();
            ProducerStateManager.Staged staged = producerState.stage();
            Optional<ProducerStateManager.BatchMetadata> dup = AppendBatches.findDuplicate(batches, staged);
            if (dup.isPresent()) {
                ProducerStateManager.BatchMetadata m = dup.get();
                return new LogAppendInfo(m.firstOffset(), m.lastOffset(), m.timestamp(),
                        cfg.logAppendTime() ? m.timestamp() : -1, logStartOffset, 0, true);
            }
            long firstOffset = logEndOffset;
            AppendBatches.Summary assigned = AppendBatches.assignOffsets(batches, staged, firstOffset, leaderEpoch,
                    cfg.logAppendTime(), now);
            write(records, batches, firstOffset, assigned.lastOffset(), now, cfg);
            staged.commit();
            if (leaderEpoch >= 0 && epochCache.assign(leaderEpoch, firstOffset)) {
                writeCheckpoint();
            }
            afterAppend(assigned.numRecords(), cfg);
            return new LogAppendInfo(firstOffset, assigned.lastOffset(), assigned.maxTimestamp(),
                    cfg.logAppendTime() ? now : -1, logStartOffset, assigned.numRecords(), false);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Follower append: batches already carry offsets and leader epochs. Validates CRC and that offsets start at
     * or after the log end offset and increase; producer state is updated without sequence checks (the leader
     * did them); new leader epochs are recorded.
     */
    public LogAppendInfo appendAsFollower(MemoryRecords records) throws IOException {
        lock.lock();
        try {
            ensureOpen();
            LogConfig cfg = config;
            List<MutableRecordBatch> batches = AppendValidator.validate(records, cfg, false, topicPartition);
            ProducerStateManager.Staged staged = producerState.stage();
            AppendBatches.Summary checked = AppendBatches.checkOffsets(batches, staged, logEndOffset, topicPartition);
            long firstOffset = batches.get(0).baseOffset();
            long lastOffset = checked.lastOffset();
            long now = time.milliseconds();
            write(records, batches, firstOffset, lastOffset, now, cfg);
            staged.commit();
            boolean epochsChanged = false;
            for (MutableRecordBatch batch : batches) {
                epochsChanged |= epochCache.assign(batch.partitionLeaderEpoch(), batch.baseOffset());
            }
            if (epochsChanged) {
                writeCheckpoint();
            }
            afterAppend(checked.numRecords(), cfg);
            return new LogAppendInfo(firstOffset, lastOffset, checked.maxTimestamp(), -1, logStartOffset,
                    checked.numRecords(), false);
        } finally {
            lock.unlock();
        }
    }

    private void write(MemoryRecords records, List<MutableRecordBatch> batches, long firstOffset, long lastOffset, long now,
                       LogConfig cfg) throws IOException {
        LogSegment segment = maybeRoll(records.sizeInBytes(), firstOffset, lastOffset, now, cfg);
        segment.append(records, batches, now);
        logEndOffset = lastOffset + 1;
    }

    private void afterAppend(int numRecords, LogConfig cfg) throws IOException {
        unflushedMessages += numRecords;
        if (unflushedMessages >= cfg.flushMessages()) {
            flush();
        }
    }

    private LogSegment maybeRoll(int size, long firstOffset, long lastOffset, long now, LogConfig cfg) throws IOException {
        LogSegment active = activeSegment();
        if (active.isEmpty()) {
            if (!active.canHoldOffset(firstOffset) || !active.canHoldOffset(lastOffset)) {
                segments.remove(active.baseOffset());
                active.closeAndDelete(null);
                LogSegment fresh = LogSegment.create(dir, firstOffset, cfg, now);
                segments.put(firstOffset, fresh);
                return fresh;
            }
            return active;
        }
        boolean full = (long) active.size() + size > cfg.segmentBytes();
        boolean old = RetentionPolicy.segmentMsElapsed(active, cfg, now);
        if (full || old || active.indexFull() || !active.canHoldOffset(lastOffset)) {
            return rollAt(Math.max(firstOffset, logEndOffset), now);
        }
        return active;
    }

    private LogSegment rollAt(long base, long now) throws IOException {
        LogSegment previous = activeSegment();
        previous.onBecomeInactive();
        LogSegment fresh = LogSegment.create(dir, base, config, now);
        segments.put(base, fresh);
        snapshots.take(base);
        return fresh;
    }

    /** Starts a new active segment at the log end offset (no-op if the active segment is empty). */
    public void roll() throws IOException {
        lock.lock();
        try {
            ensureOpen();
            if (!activeSegment().isEmpty()) {
                rollAt(logEndOffset, time.milliseconds());
            }
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------------------------------------- reads

    /** See the class contract: whole batches from the one containing {@code startOffset}, bounded by bytes and HW. */
    public FetchDataInfo read(long startOffset, int maxBytes, long maxOffsetExclusive, boolean minOneMessage) throws IOException {
        long end = logEndOffset;
        long start = logStartOffset;
        if (startOffset < start || startOffset > end) {
            throw new OffsetOutOfRangeException("Offset " + startOffset + " is out of range for " + topicPartition
                    + ": log start offset " + start + ", log end offset " + end);
        }
        long limit = Math.min(maxOffsetExclusive, end);
        if (startOffset >= limit || maxBytes < 0) {
            return new FetchDataInfo(startOffset, MemoryRecords.EMPTY);
        }
        Records records = LogReader.read(segments, startOffset, maxBytes, limit, minOneMessage);
        return new FetchDataInfo(startOffset, records == null ? MemoryRecords.EMPTY : records);
    }

    public long logStartOffset() {
        return logStartOffset;
    }

    /** The next offset to be assigned. */
    public long logEndOffset() {
        return logEndOffset;
    }

    /** Offsets below this were fsynced. */
    public long recoveryPoint() {
        return recoveryPoint;
    }

    public long size() {
        long total = 0;
        for (LogSegment s : segments.values()) {
            total += s.size();
        }
        return total;
    }

    public int numberOfSegments() {
        return segments.size();
    }

    /** Base offsets of the segments, ascending. */
    public List<Long> segmentBaseOffsets() {
        return List.copyOf(segments.keySet());
    }

    /** ListOffsets by timestamp: the first record at or after the log start with timestamp >= {@code timestamp}. */
    public Optional<TimestampAndOffset> offsetForTimestamp(long timestamp) throws IOException {
        return LogReader.offsetForTimestamp(segments, timestamp, logStartOffset);
    }

    /** ListOffsets MAX_TIMESTAMP: the first record carrying the largest timestamp in the log. */
    public Optional<TimestampAndOffset> maxTimestampAndOffset() throws IOException {
        return LogReader.maxTimestampAndOffset(segments, logStartOffset);
    }

    // ---------------------------------------------------------------------------------------------- deletion

    /** DeleteRecords: raises the log start offset to {@code offset} (persisted) and drops segments wholly below it. */
    public long deleteRecordsBefore(long offset) throws IOException {
        lock.lock();
        try {
            ensureOpen();
            if (offset > logEndOffset) {
                throw new OffsetOutOfRangeException("Cannot delete records before " + offset + " in " + topicPartition
                        + ": log end offset is " + logEndOffset);
            }
            if (offset <= logStartOffset) {
                return logStartOffset;
            }
            long now = time.milliseconds();
            logStartOffset = offset;
            for (LogSegment segment : RetentionPolicy.segmentsBelow(segmentsSnapshot(), offset)) {
                removeSegment(segment, now);
            }
            afterStartOffsetIncrease();
            return logStartOffset;
        } finally {
            lock.unlock();
        }
    }

    private void afterStartOffsetIncrease() throws IOException {
        logStartOffset = Math.max(logStartOffset, segments.firstKey());
        cleanerCheckpoint = Math.max(cleanerCheckpoint, logStartOffset);
        epochCache.truncateFromStart(logStartOffset);
        writeCheckpoint();
    }

    /**
     * Retention, called periodically by the broker: rolls the active segment once it is older than segment.ms,
     * then (only with cleanup.policy=delete) deletes the oldest segments whose newest record is older than
     * retention.ms, and the oldest segments while the log is larger than retention.bytes. An expired, non-empty
     * active segment is rolled first so it can be deleted. Returns the number of segments deleted.
     */
    public int applyRetention(long nowMs) throws IOException {
        lock.lock();
        try {
            ensureOpen();
            LogConfig cfg = config;
            if (RetentionPolicy.segmentMsElapsed(activeSegment(), cfg, nowMs)) {
                rollAt(logEndOffset, nowMs);
            }
            if (cfg.cleanupDelete() && RetentionPolicy.allExpired(segmentsSnapshot(), cfg, nowMs)
                    && !activeSegment().isEmpty()) {
                rollAt(logEndOffset, nowMs);
            }
            List<LogSegment> expired = RetentionPolicy.segmentsToDelete(segmentsSnapshot(), cfg, nowMs);
            for (LogSegment s : expired) {
                removeSegment(s, nowMs);
            }
            if (!expired.isEmpty()) {
                afterStartOffsetIncrease();
            }
            pendingDeletes.deleteDue(nowMs);
            return expired.size();
        } finally {
            lock.unlock();
        }
    }

    /** Removes a segment from the log now; its files are renamed {@code .deleted} and removed after file.delete.delay.ms. */
    private void removeSegment(LogSegment segment, long now) throws IOException {
        segments.remove(segment.baseOffset(), segment);
        segment.renameAll(DELETED_SUFFIX);
        pendingDeletes.add(segment, now + config.fileDeleteDelayMs());
    }

    // ---------------------------------------------------------------------------------------------- flush

    /** fsyncs if flush.ms has elapsed since the last flush; also finishes delayed file deletions. */
    public void maybeFlush(long nowMs) throws IOException {
        if (nowMs - lastFlushMs >= config.flushMs() && logEndOffset > recoveryPoint) {
            flush();
        }
        if (lock.tryLock()) {
            try {
                pendingDeletes.deleteDue(nowMs);
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * fsyncs every segment up to the log end offset and persists it as the recovery point. The fsyncs run
     * outside the log lock (appends continue meanwhile); concurrent flushes are harmless.
     */
    public void flush() throws IOException {
        long upTo;
        List<LogSegment> toFlush;
        lock.lock();
        try {
            ensureOpen();
            upTo = logEndOffset;
            Long floor = segments.floorKey(recoveryPoint);
            toFlush = List.copyOf((floor == null ? segments : segments.tailMap(floor, true)).values());
            unflushedMessages = 0;
        } finally {
            lock.unlock();
        }
        for (LogSegment segment : toFlush) {
            try {
                segment.flush();
            } catch (ClosedChannelException e) {
                if (segments.get(segment.baseOffset()) == segment) {
                    throw e;
                }
            }
        }
        lock.lock();
        try {
            lastFlushMs = time.milliseconds();
            if (upTo > recoveryPoint && !closed) {
                recoveryPoint = Math.min(upTo, logEndOffset);
                writeCheckpoint();
            }
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------------------------------------- truncation

    /** Drops every batch whose last offset is {@code >= offset} (follower truncation). */
    public void truncateTo(long offset) throws IOException {
        lock.lock();
        try {
            ensureOpen();
            if (offset >= logEndOffset) {
                return;
            }
            if (offset < logStartOffset || offset <= segments.firstKey()) {
                truncateFullyAndStartAt(offset);
                return;
            }
            long now = time.milliseconds();
            for (LogSegment s : List.copyOf(segments.tailMap(offset, true).values()).reversed()) {
                if (segments.size() > 1) {
                    removeSegment(s, now);
                }
            }
            activeSegment().truncateTo(offset);
            afterTruncation();
        } finally {
            lock.unlock();
        }
    }

    private void afterTruncation() throws IOException {
        logEndOffset = activeSegment().nextOffset();
        recoveryPoint = Math.min(recoveryPoint, logEndOffset);
        cleanerCheckpoint = Math.min(cleanerCheckpoint, logEndOffset);
        epochCache.truncateFromEnd(logEndOffset);
        snapshots.rebuild(segments, logStartOffset, logEndOffset, logEndOffset, false);
        writeCheckpoint();
    }

    /** Deletes the whole log and restarts it empty at {@code offset} (log start = end = offset). */
    public void truncateFullyAndStartAt(long offset) throws IOException {
        lock.lock();
        try {
            ensureOpen();
            long now = time.milliseconds();
            for (LogSegment s : List.copyOf(segments.values())) {
                removeSegment(s, now);
            }
            segments.put(offset, LogSegment.create(dir, offset, config, now));
            logEndOffset = offset;
            logStartOffset = offset;
            recoveryPoint = offset;
            cleanerCheckpoint = offset;
            epochCache.clear();
            producerState.clear();
            snapshots.deleteAll();
            writeCheckpoint();
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------------------------------------- epochs

    public int latestEpoch() {
        return epochCache.latestEpoch();
    }

    /** OffsetForLeaderEpoch, with Kafka's semantics (see {@link LeaderEpochCache#endOffsetFor}). */
    public EpochEndOffset endOffsetForEpoch(int epoch) {
        return epochCache.endOffsetFor(epoch, logEndOffset);
    }

    public ProducerStateManager producerState() {
        return producerState;
    }

    // ---------------------------------------------------------------------------------------------- cleaner support

    ReentrantLock lock() {
        return lock;
    }

    /** Offsets below this are compacted (persisted in the partition checkpoint). */
    public long cleanerCheckpoint() {
        return cleanerCheckpoint;
    }

    /**
     * Bytes in closed segments at or above the cleaner checkpoint, over bytes in all closed segments; the broker
     * cleans the log when this reaches {@code min.cleanable.dirty.ratio}.
     */
    public double dirtyRatio() {
        List<LogSegment> all = segmentsSnapshot();
        long clean = 0;
        long dirty = 0;
        for (LogSegment s : all.subList(0, all.size() - 1)) {
            if (s.baseOffset() < cleanerCheckpoint) {
                clean += s.size();
            } else {
                dirty += s.size();
            }
        }
        return clean + dirty == 0 ? 0.0 : (double) dirty / (clean + dirty);
    }

    void updateCleanerCheckpoint(long offset) throws IOException {
        lock.lock();
        try {
            cleanerCheckpoint = Math.max(logStartOffset, offset);
            writeCheckpoint();
        } finally {
            lock.unlock();
        }
    }

    /** Snapshot of the segments, oldest first (the last is the active one). */
    List<LogSegment> segmentsSnapshot() {
        return List.copyOf(segments.values());
    }

    LogSegment activeSegment() {
        return segments.lastEntry().getValue();
    }

    /**
     * Replaces {@code old} by the cleaned log file {@code cleanedLog} (named {@code <base>.log.cleaned}), if
     * {@code old} is still part of the log: renames it to {@code .log.swap} (the commit point: recovery finishes
     * a swap it finds), moves the old files aside, renames the swap file into place and opens it. Returns whether
     * the swap happened.
     */
    boolean replaceSegment(LogSegment old, Path cleanedLog) throws IOException {
        lock.lock();
        try {
            ensureOpen();
            if (segments.get(old.baseOffset()) != old || old == activeSegment()) {
                Files.deleteIfExists(cleanedLog);
                return false;
            }
            long base = old.baseOffset();
            Path swap = LogSegment.file(dir, base, LogSegment.LOG_SUFFIX + SWAP_SUFFIX);
            Files.move(cleanedLog, swap, StandardCopyOption.ATOMIC_MOVE);
            Checkpoints.fsyncDirectory(dir);
            old.renameAll(DELETED_SUFFIX);
            Files.move(swap, LogSegment.file(dir, base, LogSegment.LOG_SUFFIX), StandardCopyOption.ATOMIC_MOVE);
            Checkpoints.fsyncDirectory(dir);
            LogSegment fresh = LogSegment.open(dir, base, config, time.milliseconds(), true);
            fresh.onBecomeInactive();
            segments.put(base, fresh);
            pendingDeletes.add(old, time.milliseconds() + config.fileDeleteDelayMs());
            return true;
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------------------------------------- lifecycle

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("log " + topicPartition + " is closed");
        }
    }

    /** Flushes, snapshots producer state, closes the files and writes the clean-shutdown marker. */
    @Override
    public void close() throws IOException {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            IOException failure = null;
            try {
                flush();
                snapshots.take(logEndOffset);
            } catch (IOException e) {
                failure = e;
            }
            closed = true;
            // release every file handle even when the disk failed, so the log dir can be unmounted or replaced
            for (LogSegment s : segments.values()) {
                try {
                    s.close();
                } catch (IOException e) {
                    s.closeQuietly();
                    if (failure == null) {
                        failure = e;
                    } else {
                        failure.addSuppressed(e);
                    }
                }
            }
            if (failure != null) {
                // no clean-shutdown marker: the next start recovers from the last recovery point
                throw failure;
            }
            pendingDeletes.deleteAll();
            Checkpoints.writeAtomically(dir.resolve(CLEAN_SHUTDOWN), "clean\n");
        } finally {
            lock.unlock();
        }
    }

    /** Simulates a crash for tests: closes file handles without flushing, snapshotting or the clean marker. */
    void closeWithoutMarker() {
        lock.lock();
        try {
            closed = true;
            for (LogSegment s : segments.values()) {
                s.closeQuietly();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Closes the log and removes its directory. */
    public void delete() throws IOException {
        lock.lock();
        try {
            if (!closed) {
                closed = true;
                for (LogSegment s : segments.values()) {
                    s.closeQuietly();
                }
                pendingDeletes.closeAllQuietly();
            }
            try (Stream<Path> walk = Files.walk(dir)) {
                for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "PartitionLog(" + topicPartition + ", start=" + logStartOffset + ", end=" + logEndOffset
                + ", segments=" + segments.size() + ")";
    }
}
