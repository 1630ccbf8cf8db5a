package dev.skein.broker.storage;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.UnsupportedForMessageFormatException;
import org.apache.kafka.common.record.FileRecords.TimestampAndOffset;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Time;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
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
 */
public final class PartitionLog implements Closeable {
    static final String CLEAN_SHUTDOWN = "clean.shutdown";
    static final String DELETED_SUFFIX = ".deleted";
    static final String CLEANED_SUFFIX = ".cleaned";
    static final String SWAP_SUFFIX = ".swap";
    private static final int SNAPSHOTS_TO_KEEP = 3;

    private final Path dir;
    private final TopicPartition topicPartition;
    private final Time time;
    private final ReentrantLock lock = new ReentrantLock();
    private final ConcurrentSkipListMap<Long, LogSegment> segments = new ConcurrentSkipListMap<>();
    private final ProducerStateManager producerState = new ProducerStateManager();
    private final LeaderEpochCache epochCache = new LeaderEpochCache();
    private final ArrayDeque<PendingDelete> pendingDeletes = new ArrayDeque<>();
    private volatile LogConfig config;
    private volatile long logEndOffset;
    private volatile long logStartOffset;
    private volatile long recoveryPoint;
    private volatile long cleanerCheckpoint;
    private volatile long lastFlushMs;
    private long unflushedMessages;
    private boolean closed;

    private record PendingDelete(LogSegment segment, long deleteAtMs) {
    }

    private PartitionLog(Path dir, TopicPartition tp, LogConfig config, Time time) {
        this.dir = dir;
        this.topicPartition = tp;
        this.config = config;
        this.time = time;
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
        boolean clean = Files.exists(dir.resolve(CLEAN_SHUTDOWN));
        boolean swapsCompleted = completeInterruptedOperations();
        PartitionCheckpoint cp = PartitionCheckpoint.read(dir);
        long checkpointRecovery = clean && !swapsCompleted ? Long.MAX_VALUE : cp.recoveryPoint();

        List<Long> bases = listSegmentBases();
        boolean truncated = false;
        for (int i = 0; i < bases.size(); i++) {
            long base = bases.get(i);
            if (truncated) {
                deleteSegmentFiles(base);
                continue;
            }
            long nextBase = i + 1 < bases.size() ? bases.get(i + 1) : Long.MAX_VALUE;
            boolean recover = nextBase > checkpointRecovery;
            LogSegment segment = LogSegment.open(dir, base, config, now, recover);
            segments.put(base, segment);
            if (segment.truncatedBytes > 0) {
                truncated = true;
            }
        }
        if (segments.isEmpty()) {
            long start = Math.max(0, cp.logStartOffset());
            segments.put(start, LogSegment.create(dir, start, config, now));
        }
        logEndOffset = activeSegment().nextOffset();
        logStartOffset = Math.min(Math.max(cp.logStartOffset(), segments.firstKey()), logEndOffset);
        cleanerCheckpoint = Math.min(Math.max(cp.cleanerCheckpoint(), logStartOffset), logEndOffset);
        epochCache.load(cp.epochs());
        epochCache.truncateFromEnd(logEndOffset);
        epochCache.truncateFromStart(logStartOffset);

        boolean recovered = !clean || swapsCompleted;
        if (recovered) {
            for (LogSegment s : segments.values()) {
                s.flush();
            }
        }
        recoveryPoint = logEndOffset;
        long snapshotLimit = recovered ? Math.min(cp.recoveryPoint(), logEndOffset) : logEndOffset;
        rebuildProducerState(snapshotLimit, recovered);
        lastFlushMs = now;
        writeCheckpoint();
        Files.deleteIfExists(dir.resolve(CLEAN_SHUTDOWN));
        Checkpoints.fsyncDirectory(dir);
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
            if (name.endsWith(LogSegment.LOG_SUFFIX + SWAP_SUFFIX)) {
                String baseName = name.substring(0, name.length() - SWAP_SUFFIX.length() - LogSegment.LOG_SUFFIX.length());
                Files.deleteIfExists(dir.resolve(baseName + LogSegment.INDEX_SUFFIX));
                Files.deleteIfExists(dir.resolve(baseName + LogSegment.TIME_INDEX_SUFFIX));
                Files.move(p, dir.resolve(baseName + LogSegment.LOG_SUFFIX), StandardCopyOption.ATOMIC_MOVE,
                        StandardCopyOption.REPLACE_EXISTING);
                swapped = true;
            } else if (name.endsWith(CLEANED_SUFFIX) || name.endsWith(DELETED_SUFFIX) || name.endsWith(".tmp")
                    || name.endsWith(SWAP_SUFFIX)) {
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

    private void deleteSegmentFiles(long base) throws IOException {
        for (String suffix : new String[]{LogSegment.LOG_SUFFIX, LogSegment.INDEX_SUFFIX, LogSegment.TIME_INDEX_SUFFIX}) {
            Files.deleteIfExists(LogSegment.file(dir, base, suffix));
        }
    }

    /**
     * Rebuilds producer state and (on the way) missing leader epochs: starts from the newest intact snapshot at
     * or below {@code snapshotLimit}, then applies the batch headers after it (headers only, nothing is
     * decompressed). Without a usable snapshot the whole log is scanned.
     */
    private void rebuildProducerState(long snapshotLimit, boolean scanEpochs) throws IOException {
        producerState.clear();
        long from = segments.firstKey();
        for (long offset : snapshotOffsets().reversed()) {
            if (offset <= snapshotLimit && producerState.loadSnapshot(dir, offset)) {
                from = offset;
                break;
            }
        }
        for (long offset : snapshotOffsets()) {
            if (offset > logEndOffset) {
                Files.deleteIfExists(dir.resolve(LogSegment.fileName(offset, ProducerStateManager.SNAPSHOT_SUFFIX)));
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

    private List<Long> snapshotOffsets() throws IOException {
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

    private void takeProducerSnapshot(long offset) throws IOException {
        producerState.writeSnapshot(dir, offset);
        List<Long> offsets = snapshotOffsets();
        for (int i = 0; i < offsets.size() - SNAPSHOTS_TO_KEEP; i++) {
            Files.deleteIfExists(dir.resolve(LogSegment.fileName(offsets.get(i), ProducerStateManager.SNAPSHOT_SUFFIX)));
        }
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
            List<MutableRecordBatch> batches = validate(records, cfg, true);
            long now = time.milliseconds();
            ProducerStateManager.Staged staged = producerState.stage();
            for (MutableRecordBatch batch : batches) {
                if (!batch.hasProducerId()) {
                    continue;
                }
                Optional<ProducerStateManager.BatchMetadata> dup = staged.findDuplicate(batch);
                if (dup.isPresent()) {
                    if (batches.size() != 1) {
                        throw new OutOfOrderSequenceException("Duplicate batch of producer " + batch.producerId()
                                + " inside a multi-batch append");
                    }
                    ProducerStateManager.BatchMetadata m = dup.get();
                    return new LogAppendInfo(m.firstOffset(), m.lastOffset(), m.timestamp(),
                            cfg.logAppendTime() ? m.timestamp() : -1, logStartOffset, 0, true);
                }
            }
            long next = logEndOffset;
            long firstOffset = next;
            long maxTimestamp = RecordBatch.NO_TIMESTAMP;
            int numRecords = 0;
            for (MutableRecordBatch batch : batches) {
                if (batch.hasProducerId()) {
                    staged.validate(batch);
                }
                int count = batch.countOrNull();
                batch.setLastOffset(next + count - 1);
                batch.setPartitionLeaderEpoch(leaderEpoch);
                if (cfg.logAppendTime()) {
                    batch.setMaxTimestamp(TimestampType.LOG_APPEND_TIME, now);
                }
                maxTimestamp = Math.max(maxTimestamp, batch.maxTimestamp());
                if (batch.hasProducerId()) {
                    staged.update(batch, batch.maxTimestamp());
                }
                next += count;
                numRecords += count;
            }
            long lastOffset = next - 1;
            write(records, firstOffset, lastOffset, now, cfg);
            staged.commit();
            if (leaderEpoch >= 0 && epochCache.assign(leaderEpoch, firstOffset)) {
                writeCheckpoint();
            }
            afterAppend(numRecords, cfg);
            return new LogAppendInfo(firstOffset, lastOffset, maxTimestamp, cfg.logAppendTime() ? now : -1,
                    logStartOffset, numRecords, false);
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
            List<MutableRecordBatch> batches = validate(records, cfg, false);
            long expected = logEndOffset;
            long maxTimestamp = RecordBatch.NO_TIMESTAMP;
            int numRecords = 0;
            ProducerStateManager.Staged staged = producerState.stage();
            for (MutableRecordBatch batch : batches) {
                if (batch.baseOffset() < expected) {
                    throw new InvalidRecordException("Follower append for " + topicPartition + " has offset "
                            + batch.baseOffset() + " but expected at least " + expected);
                }
                expected = batch.lastOffset() + 1;
                maxTimestamp = Math.max(maxTimestamp, batch.maxTimestamp());
                numRecords += batch.countOrNull();
                if (batch.hasProducerId()) {
                    staged.update(batch, batch.maxTimestamp());
                }
            }
            long firstOffset = batches.get(0).baseOffset();
            long lastOffset = expected - 1;
            long now = time.milliseconds();
            write(records, firstOffset, lastOffset, now, cfg);
            staged.commit();
            boolean epochsChanged = false;
            for (MutableRecordBatch batch : batches) {
                epochsChanged |= epochCache.assign(batch.partitionLeaderEpoch(), batch.baseOffset());
            }
            if (epochsChanged) {
                writeCheckpoint();
            }
            afterAppend(numRecords, cfg);
            return new LogAppendInfo(firstOffset, lastOffset, maxTimestamp, -1, logStartOffset, numRecords, false);
        } finally {
            lock.unlock();
        }
    }

    private List<MutableRecordBatch> validate(MemoryRecords records, LogConfig cfg, boolean leader) {
        if (records.sizeInBytes() > cfg.segmentBytes()) {
            throw new RecordBatchTooLargeException("Append of " + records.sizeInBytes()
                    + " bytes exceeds segment.bytes " + cfg.segmentBytes() + " for " + topicPartition);
        }
        List<MutableRecordBatch> batches = new ArrayList<>();
        long validBytes = 0;
        for (MutableRecordBatch batch : records.batches()) {
            if (batch.magic() != RecordBatch.MAGIC_VALUE_V2) {
                throw new UnsupportedForMessageFormatException("Record batch magic " + batch.magic()
                        + " is not supported; only magic v2 is accepted");
            }
            if (batch.sizeInBytes() > cfg.maxMessageBytes()) {
                throw new RecordTooLargeException("Record batch of " + batch.sizeInBytes()
                        + " bytes exceeds max.message.bytes " + cfg.maxMessageBytes() + " for " + topicPartition);
            }
            batch.ensureValid();
            if (batch.isTransactional()) {
                throw new InvalidRecordException("transactions are not supported");
            }
            if (batch.isControlBatch()) {
                throw new InvalidRecordException("control batches are not accepted from clients");
            }
            Integer count = batch.countOrNull();
            if (count == null || (leader && count < 1) || count < 0) {
                throw new InvalidRecordException("Record batch must contain at least one record");
            }
            if (leader && batch.lastOffset() - batch.baseOffset() != count - 1) {
                throw new InvalidRecordException("Record batch last offset delta " + (batch.lastOffset() - batch.baseOffset())
                        + " does not match its record count " + count);
            }
            if (!leader && batch.lastOffset() < batch.baseOffset()) {
                throw new InvalidRecordException("Record batch last offset is below its base offset");
            }
            if (leader && cfg.cleanupCompact()) {
                for (Record record : batch) {
                    if (!record.hasKey()) {
                        throw new InvalidRecordException("Compacted topic cannot accept message without key in topic partition "
                                + topicPartition);
                    }
                }
            }
            validBytes += batch.sizeInBytes();
            batches.add(batch);
        }
        if (validBytes != records.sizeInBytes()) {
            throw new CorruptRecordException("Append to " + topicPartition + " ends with a partial record batch ("
                    + (records.sizeInBytes() - validBytes) + " trailing bytes)");
        }
        if (batches.isEmpty()) {
            throw new InvalidRecordException("Append to " + topicPartition + " contains no record batches");
        }
        return batches;
    }

    private void write(MemoryRecords records, long firstOffset, long lastOffset, long now, LogConfig cfg) throws IOException {
        LogSegment segment = maybeRoll(records.sizeInBytes(), firstOffset, lastOffset, now, cfg);
        segment.append(records, now);
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
        boolean old = now - active.rollStartMs() > cfg.segmentMs();
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
        takeProducerSnapshot(base);
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
        Long floor = segments.floorKey(startOffset);
        Map<Long, LogSegment> candidates = floor == null ? segments : segments.tailMap(floor, true);
        for (LogSegment segment : candidates.values()) {
            if (segment.baseOffset() >= limit) {
                break;
            }
            try {
                var records = segment.read(startOffset, maxBytes, limit, minOneMessage);
                if (records != null) {
                    return new FetchDataInfo(startOffset, records);
                }
            } catch (org.apache.kafka.common.KafkaException e) {
                if (!(e.getCause() instanceof ClosedChannelException) || segments.get(segment.baseOffset()) == segment) {
                    throw e;
                }
                // the segment was deleted and closed under us: continue with the next one
            }
        }
        return new FetchDataInfo(startOffset, MemoryRecords.EMPTY);
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
        long start = logStartOffset;
        for (LogSegment segment : segments.values()) {
            if (segment.nextOffset() <= start || segment.maxTimestamp() < timestamp) {
                continue;
            }
            Optional<TimestampAndOffset> found = segment.findOffsetByTimestamp(timestamp, start);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    /** ListOffsets MAX_TIMESTAMP: the first record carrying the largest timestamp in the log. */
    public Optional<TimestampAndOffset> maxTimestampAndOffset() throws IOException {
        LogSegment best = null;
        for (LogSegment segment : segments.values()) {
            if (segment.nextOffset() > logStartOffset
                    && (best == null || segment.maxTimestamp() > best.maxTimestamp())) {
                best = segment;
            }
        }
        if (best == null || best.maxTimestamp() == RecordBatch.NO_TIMESTAMP) {
            return Optional.empty();
        }
        return best.findOffsetByTimestamp(best.maxTimestamp(), logStartOffset);
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
            for (LogSegment segment : List.copyOf(segments.values())) {
                Long next = segments.higherKey(segment.baseOffset());
                if (next == null || next > offset) {
                    break;
                }
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
            LogSegment active = activeSegment();
            if (!active.isEmpty() && nowMs - active.rollStartMs() > cfg.segmentMs()) {
                rollAt(logEndOffset, nowMs);
            }
            int deleted = 0;
            if (cfg.cleanupDelete()) {
                if (cfg.retentionMs() >= 0) {
                    boolean allExpired = true;
                    for (LogSegment s : segments.values()) {
                        if (!s.isEmpty() && nowMs - s.maxTimestamp() <= cfg.retentionMs()) {
                            allExpired = false;
                            break;
                        }
                    }
                    if (allExpired && !activeSegment().isEmpty()) {
                        rollAt(logEndOffset, nowMs);
                    }
                    for (LogSegment s : List.copyOf(segments.values())) {
                        if (s == activeSegment() || (!s.isEmpty() && nowMs - s.maxTimestamp() <= cfg.retentionMs())) {
                            break;
                        }
                        removeSegment(s, nowMs);
                        deleted++;
                    }
                }
                if (cfg.retentionBytes() >= 0) {
                    long diff = size() - cfg.retentionBytes();
                    for (LogSegment s : List.copyOf(segments.values())) {
                        if (s == activeSegment() || diff - s.size() < 0) {
                            break;
                        }
                        diff -= s.size();
                        removeSegment(s, nowMs);
                        deleted++;
                    }
                }
                if (deleted > 0) {
                    logStartOffset = Math.max(logStartOffset, segments.firstKey());
                    afterStartOffsetIncrease();
                }
            }
            deletePendingSegments(nowMs, false);
            return deleted;
        } finally {
            lock.unlock();
        }
    }

    /** Removes a segment from the log now; its files are renamed {@code .deleted} and removed after file.delete.delay.ms. */
    private void removeSegment(LogSegment segment, long now) throws IOException {
        segments.remove(segment.baseOffset(), segment);
        segment.renameAll(DELETED_SUFFIX);
        pendingDeletes.add(new PendingDelete(segment, now + config.fileDeleteDelayMs()));
    }

    private void deletePendingSegments(long now, boolean all) throws IOException {
        while (!pendingDeletes.isEmpty() && (all || pendingDeletes.peek().deleteAtMs() <= now)) {
            pendingDeletes.poll().segment().closeAndDelete(DELETED_SUFFIX);
        }
    }

    // ---------------------------------------------------------------------------------------------- flush

    /** fsyncs if flush.ms has elapsed since the last flush; also finishes delayed file deletions. */
    public void maybeFlush(long nowMs) throws IOException {
        if (nowMs - lastFlushMs >= config.flushMs() && logEndOffset > recoveryPoint) {
            flush();
        }
        if (lock.tryLock()) {
            try {
                deletePendingSegments(nowMs, false);
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
        rebuildProducerState(logEndOffset, false);
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
            for (long snap : snapshotOffsets()) {
                Files.deleteIfExists(dir.resolve(LogSegment.fileName(snap, ProducerStateManager.SNAPSHOT_SUFFIX)));
            }
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
            pendingDeletes.add(new PendingDelete(old, time.milliseconds() + config.fileDeleteDelayMs()));
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
                takeProducerSnapshot(logEndOffset);
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
            deletePendingSegments(0, true);
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
                for (PendingDelete p : pendingDeletes) {
                    p.segment().closeQuietly();
                }
                pendingDeletes.clear();
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
