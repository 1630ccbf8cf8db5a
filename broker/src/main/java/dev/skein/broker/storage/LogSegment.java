package dev.skein.broker.storage;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.record.DefaultRecordBatch;
import org.apache.kafka.common.record.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.FileRecords;
import org.apache.kafka.common.record.FileRecords.TimestampAndOffset;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.Records;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Optional;

/**
 * One segment of a partition log: {@code <base>.log} holding record batches exactly as stored, plus its
 * derived {@code .index} and {@code .timeindex}. Appends are made by the owning {@link PartitionLog} under its
 * lock; reads may run concurrently and only see bytes covered by {@link FileRecords#sizeInBytes()}, which
 * grows after a write completes.
 */
final class LogSegment implements Closeable {
    static final String LOG_SUFFIX = ".log";
    static final String INDEX_SUFFIX = ".index";
    static final String TIME_INDEX_SUFFIX = ".timeindex";
    /** The files of one segment, by suffix. */
    private static final List<String> FILE_SUFFIXES = List.of(LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX);
    /** Where a v2 batch's LastOffsetDelta starts (after base offset, length, leader epoch, magic, CRC, attributes). */
    private static final int LAST_OFFSET_DELTA_OFFSET = 23;
    /** A batch's header up to and with LastOffsetDelta: all a read needs of each batch it passes. */
    private static final int SCAN_HEADER_BYTES = LAST_OFFSET_DELTA_OFFSET + 4;
    /** Each reading thread's buffer for {@link #readHeader}; direct, so the pread needs no copy through a temporary one. */
    private static final ThreadLocal<ByteBuffer> SCAN_HEADER =
            ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(SCAN_HEADER_BYTES));

    private final Path dir;
    private final long baseOffset;
    private final int indexIntervalBytes;
    private final FileRecords log;
    private final OffsetIndex offsetIndex;
    private final TimeIndex timeIndex;
    /** The active segment's last batches, for reads near the end without header reads from the file. */
    private final RecentBatches recent = new RecentBatches();
    private int bytesSinceLastIndexEntry;
    private volatile long maxTimestamp = RecordBatch.NO_TIMESTAMP;
    private volatile long offsetOfMaxTimestamp = -1;
    private volatile long lastOffset = -1;
    private long rollStartMs;
    private boolean closed;
    /** Bytes cut off by recovery when this segment was opened (0 if it was intact). */
    int truncatedBytes;

    private LogSegment(Path dir, long baseOffset, LogConfig config, FileRecords log, long nowMs) throws IOException {
        this.dir = dir;
        this.baseOffset = baseOffset;
        this.indexIntervalBytes = config.indexIntervalBytes();
        this.log = log;
        SegmentChannels.register(log.channel());
        this.offsetIndex = new OffsetIndex(file(dir, baseOffset, INDEX_SUFFIX), baseOffset, config.segmentIndexBytes());
        this.timeIndex = new TimeIndex(file(dir, baseOffset, TIME_INDEX_SUFFIX), baseOffset, config.segmentIndexBytes());
        this.rollStartMs = nowMs;
    }

    static String fileName(long offset, String suffix) {
        return String.format("%020d", offset) + suffix;
    }

    static Path file(Path dir, long offset, String suffix) {
        return dir.resolve(fileName(offset, suffix));
    }

    /** Deletes the log and index files of the segment at {@code baseOffset}, if present. */
    static void deleteFiles(Path dir, long baseOffset) throws IOException {
        for (String suffix : FILE_SUFFIXES) {
            Files.deleteIfExists(file(dir, baseOffset, suffix));
        }
    }

    /** Creates a fresh, empty segment, replacing any files left with the same base offset. */
    static LogSegment create(Path dir, long baseOffset, LogConfig config, long nowMs) throws IOException {
        deleteFiles(dir, baseOffset);
        FileRecords records = FileRecords.open(file(dir, baseOffset, LOG_SUFFIX).toFile());
        return new LogSegment(dir, baseOffset, config, records, nowMs);
    }

    /**
     * Opens an existing segment. With {@code recover}, every batch is validated (CRC, offsets) and the file
     * truncated at the first invalid or torn batch; the indexes are rebuilt. Without it, the indexes are loaded
     * and rebuilt only when missing or inconsistent. Returns the segment; {@link #truncatedBytes} tells whether
     * recovery cut anything.
     */
    static LogSegment open(Path dir, long baseOffset, LogConfig config, long nowMs, boolean recover) throws IOException {
        boolean indexesPresent = Files.exists(file(dir, baseOffset, INDEX_SUFFIX))
                && Files.exists(file(dir, baseOffset, TIME_INDEX_SUFFIX));
        FileRecords records = FileRecords.open(file(dir, baseOffset, LOG_SUFFIX).toFile(), true, true, 0, false);
        LogSegment segment = new LogSegment(dir, baseOffset, config, records, nowMs);
        if (recover || !indexesPresent || !segment.offsetIndex.load() || !segment.timeIndex.load()) {
            segment.truncatedBytes = segment.rebuild(true);
        } else {
            segment.truncatedBytes = segment.loadTail();
        }
        return segment;
    }

    long baseOffset() {
        return baseOffset;
    }

    FileRecords records() {
        return log;
    }

    int size() {
        return log.sizeInBytes();
    }

    boolean isEmpty() {
        return log.sizeInBytes() == 0;
    }

    /** The offset after the last batch in this segment (the base offset when empty). */
    long nextOffset() {
        long last = lastOffset;
        return last < 0 ? baseOffset : last + 1;
    }

    long maxTimestamp() {
        return maxTimestamp;
    }

    long offsetOfMaxTimestamp() {
        return offsetOfMaxTimestamp;
    }

    long rollStartMs() {
        return rollStartMs;
    }

    boolean indexFull() {
        return offsetIndex.isFull() || timeIndex.isFull();
    }

    /** Whether an append ending at {@code lastOffset} still fits relative offsets of this segment. */
    boolean canHoldOffset(long offset) {
        return offset - baseOffset <= Integer.MAX_VALUE && offset >= baseOffset;
    }

    /**
     * Appends batches whose offsets are already assigned. On an I/O error the file and indexes are cut
     * back to their state before the call and the exception rethrown.
     */
    void append(MemoryRecords records, long nowMs) throws IOException {
        append(records, records.batches(), nowMs);
    }

    /**
     * As {@link #append(MemoryRecords, long)}, with {@code batches} the batches of {@code records} in order (a
     * validated append has them listed already; iterating the records again would slice each batch again).
     */
    void append(MemoryRecords records, Iterable<? extends RecordBatch> batches, long nowMs) throws IOException {
        int startSize = log.sizeInBytes();
        if (startSize == 0) {
            rollStartMs = nowMs;
        }
        long prevMaxTs = maxTimestamp;
        long prevMaxTsOffset = offsetOfMaxTimestamp;
        long prevLast = lastOffset;
        int prevBytesSince = bytesSinceLastIndexEntry;
        int prevOffsetEntries = offsetIndex.entries();
        int prevTimeEntries = timeIndex.entries();
        try {
            int position = startSize;
            for (RecordBatch batch : batches) {
                indexBatch(batch, position);
                position += batch.sizeInBytes();
            }
            int written = log.append(records);
            if (written != records.sizeInBytes()) {
                throw new IOException("short write to " + log.file());
            }
        } catch (IOException | RuntimeException e) {
            try {
                log.truncateTo(startSize);
                if (log.channel().size() > startSize) {
                    log.channel().truncate(startSize);
                }
                log.channel().position(startSize);
                offsetIndex.truncateToEntries(prevOffsetEntries);
                timeIndex.truncateToEntries(prevTimeEntries);
            } catch (IOException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            recent.clear();
            maxTimestamp = prevMaxTs;
            offsetOfMaxTimestamp = prevMaxTsOffset;
            lastOffset = prevLast;
            bytesSinceLastIndexEntry = prevBytesSince;
            throw e;
        }
    }

    private void indexBatch(RecordBatch batch, int position) throws IOException {
        trackMaxTimestamp(batch);
        // Appends roll before an index fills up; the check matters when rebuilding with a smaller
        // segment.index.bytes than the segment was written with (later entries are then just not indexed).
        if (bytesSinceLastIndexEntry > indexIntervalBytes && !offsetIndex.isFull() && !timeIndex.isFull()) {
            offsetIndex.append(batch.lastOffset(), position);
            timeIndex.maybeAppend(maxTimestamp, offsetOfMaxTimestamp, false);
            bytesSinceLastIndexEntry = 0;
        }
        bytesSinceLastIndexEntry += batch.sizeInBytes();
        lastOffset = batch.lastOffset();
        recent.add(batch.baseOffset(), lastOffset, position, batch.sizeInBytes());
    }

    /**
     * Scans the whole file, rebuilding both indexes; with {@code validate}, stops at the first batch that is
     * torn, fails its CRC, is not magic v2 or has non-increasing offsets, and truncates the file there.
     * Returns the number of bytes truncated.
     */
    int rebuild(boolean validate) throws IOException {
        recent.clear();
        offsetIndex.reset();
        timeIndex.reset();
        maxTimestamp = RecordBatch.NO_TIMESTAMP;
        offsetOfMaxTimestamp = -1;
        lastOffset = -1;
        bytesSinceLastIndexEntry = 0;
        int validBytes = 0;
        long expectedMin = baseOffset;
        try {
            for (FileChannelRecordBatch batch : log.batches()) {
                if (validate && !isValidNext(batch, expectedMin)) {
                    break;
                }
                indexBatch(batch, validBytes);
                validBytes += batch.sizeInBytes();
                expectedMin = batch.lastOffset() + 1;
            }
        } catch (CorruptRecordException e) {
            if (!validate) {
                throw e;
            }
        }
        int truncated = log.sizeInBytes() - validBytes;
        if (truncated > 0) {
            log.truncateTo(validBytes);
        }
        long physical = log.channel().size();
        if (physical > validBytes) {
            log.channel().truncate(validBytes);
            truncated = Math.max(truncated, (int) (physical - validBytes));
        }
        log.channel().position(validBytes);
        // the rebuilt files whole, as a clean close would leave them
        offsetIndex.writePending();
        timeIndex.writePending();
        return truncated;
    }

    /**
     * After loading indexes of a cleanly closed segment: recomputes the tail state from the last index entry,
     * validating the batches there (CRC, magic, increasing offsets). Bytes written after the clean shutdown
     * (a torn or foreign write) are not trusted: the segment is then rebuilt with validation, which cuts them off.
     * Returns the number of bytes truncated.
     */
    private int loadTail() throws IOException {
        OffsetIndex.Entry last = offsetIndex.lastEntry();
        maxTimestamp = timeIndex.lastTimestamp();
        offsetOfMaxTimestamp = timeIndex.lastOffset();
        int position = last.position();
        int size = log.sizeInBytes();
        if (position > size) {
            return rebuild(true);
        }
        bytesSinceLastIndexEntry = 0;
        long expectedMin = baseOffset;
        int validEnd = position;
        try {
            for (FileChannelRecordBatch batch : log.slice(position, size - position).batches()) {
                if (!isValidNext(batch, expectedMin)) {
                    break;
                }
                trackMaxTimestamp(batch);
                lastOffset = batch.lastOffset();
                recent.add(batch.baseOffset(), lastOffset, validEnd, batch.sizeInBytes());
                bytesSinceLastIndexEntry += batch.sizeInBytes();
                expectedMin = batch.lastOffset() + 1;
                validEnd += batch.sizeInBytes();
            }
        } catch (CorruptRecordException | IllegalArgumentException e) {
            return rebuild(true);
        }
        return validEnd == size && log.channel().size() == size ? 0 : rebuild(true);
    }

    /**
     * Whether a batch read back from the file may follow offset {@code expectedMin - 1} in this segment: magic v2,
     * offsets increasing and within the segment's relative range. A CRC mismatch throws
     * {@link CorruptRecordException}.
     */
    private boolean isValidNext(RecordBatch batch, long expectedMin) {
        if (batch.magic() != RecordBatch.MAGIC_VALUE_V2) {
            return false;
        }
        batch.ensureValid();
        return batch.baseOffset() >= expectedMin && batch.lastOffset() >= batch.baseOffset()
                && canHoldOffset(batch.lastOffset());
    }

    private void trackMaxTimestamp(RecordBatch batch) {
        if (batch.maxTimestamp() > maxTimestamp) {
            maxTimestamp = batch.maxTimestamp();
            offsetOfMaxTimestamp = batch.lastOffset();
        }
    }

    /** Position of the first batch with lastOffset >= target within {@code limit} bytes, or -1. */
    private int find(long target, int limit) {
        int known = recent.findPosition(target, limit);
        if (known != RecentBatches.UNKNOWN) {
            return known;
        }
        int position = offsetIndex.lookup(target).position();
        if (position > limit) {
            position = 0;
        }
        ByteBuffer header = SCAN_HEADER.get();
        for (int size; (size = readHeader(header, position, limit)) >= 0; position += size) {
            if (lastOffset(header) >= target) {
                return position;
            }
        }
        return -1;
    }

    /**
     * Reads the start of the batch at {@code position} into {@code header} with one pread and returns the batch's
     * size, or -1 if no whole batch starts there within the first {@code limit} bytes (the end of what is
     * published). Its last offset is then {@link #lastOffset(ByteBuffer)}. Reads scan with this rather than with
     * {@link FileRecords#batches()}, which reads two headers per batch into heap buffers and whose iterator is a
     * second read path for the JIT to compile the first time a consumer reads back further than
     * {@link RecentBatches} reaches.
     */
    private int readHeader(ByteBuffer header, int position, int limit) {
        if (limit - position < SCAN_HEADER_BYTES) {
            return -1;
        }
        header.clear();
        try {
            while (header.hasRemaining()) {
                if (log.channel().read(header, position + header.position()) < 0) {
                    return -1;
                }
            }
        } catch (IOException e) {
            // LogReader tells a segment deleted under a read by the ClosedChannelException cause
            throw new KafkaException("Failed to read the batch header at position " + position + " of " + log.file(), e);
        }
        int size = header.getInt(Records.SIZE_OFFSET) + Records.LOG_OVERHEAD;
        byte magic = header.get(Records.MAGIC_OFFSET);
        if (magic != RecordBatch.MAGIC_VALUE_V2 || size < DefaultRecordBatch.RECORD_BATCH_OVERHEAD) {
            throw new CorruptRecordException("The batch at position " + position + " of " + log.file() + " has magic "
                    + magic + " and size " + size + "; only magic v2 batches of at least "
                    + DefaultRecordBatch.RECORD_BATCH_OVERHEAD + " bytes are stored");
        }
        return (long) position + size > limit ? -1 : size;
    }

    /** The last offset of the batch whose header {@link #readHeader} read into {@code header}. */
    private static long lastOffset(ByteBuffer header) {
        return header.getLong(Records.OFFSET_OFFSET) + header.getInt(LAST_OFFSET_DELTA_OFFSET);
    }

    /**
     * Whole batches starting with the one containing {@code startOffset} (or the first after it), at most
     * {@code maxBytes} (unless {@code minOneMessage} and the first batch alone is larger), excluding any batch
     * whose last offset is {@code >= maxOffsetExclusive}. Returns null if this segment holds no batch with
     * last offset {@code >= startOffset}.
     */
    Records read(long startOffset, int maxBytes, long maxOffsetExclusive, boolean minOneMessage) {
        int limit = log.sizeInBytes();
        RecentBatches.Range known = recent.read(startOffset, limit, maxBytes, maxOffsetExclusive, minOneMessage);
        if (known != RecentBatches.UNKNOWN_RANGE) {
            return known == null ? null : log.slice(known.position(), known.size());
        }
        int first = find(startOffset, limit);
        if (first < 0) {
            return null;
        }
        // Every batch between `first` and the last indexed batch that starts within the read's bytes, and whose last
        // offset is below the bound, is taken whole: the scan below reads headers only from there (a pread or two
        // per batch), not from `first`. A catch-up read of 1 MB otherwise passes some 60 batches of 16 KB.
        int from = offsetIndex.lastPositionWithin(first, (int) Math.min(limit, (long) first + maxBytes), maxOffsetExclusive);
        int total = from - first;
        if (total >= maxBytes) {
            return log.slice(first, total);
        }
        ByteBuffer header = SCAN_HEADER.get();
        for (int position = from, size; (size = readHeader(header, position, limit)) >= 0; position += size) {
            if (lastOffset(header) >= maxOffsetExclusive || !fits(total, size, maxBytes, minOneMessage)) {
                break;
            }
            total += size;
            if (total >= maxBytes) {
                break;
            }
        }
        return log.slice(first, total);
    }

    /**
     * The size rule of a read, for a scan of the file and for {@link RecentBatches} alike: whether a batch of
     * {@code size} bytes joins the {@code total} bytes already taken within {@code maxBytes}; the first batch
     * always does with {@code minOneMessage}.
     */
    static boolean fits(int total, int size, int maxBytes, boolean minOneMessage) {
        return (long) total + size <= maxBytes || (total == 0 && minOneMessage);
    }

    /** First record with timestamp >= target at or after {@code startOffset}, or empty. */
    Optional<TimestampAndOffset> findOffsetByTimestamp(long target, long startOffset) {
        long fromOffset = Math.max(startOffset, timeIndex.lastOffsetBefore(target));
        int limit = log.sizeInBytes();
        int position = Math.min(offsetIndex.lookup(fromOffset).position(), limit);
        for (FileChannelRecordBatch batch : log.slice(position, limit - position).batches()) {
            if (batch.lastOffset() < startOffset || batch.maxTimestamp() < target) {
                continue;
            }
            for (Record record : batch) {
                if (record.offset() >= startOffset && record.timestamp() >= target) {
                    return Optional.of(new TimestampAndOffset(record.timestamp(), record.offset(), epochOf(batch)));
                }
            }
        }
        return Optional.empty();
    }

    /** The record holding this segment's largest timestamp. */
    Optional<TimestampAndOffset> maxTimestampRecord() {
        long target = maxTimestamp;
        if (target == RecordBatch.NO_TIMESTAMP) {
            return Optional.empty();
        }
        return findOffsetByTimestamp(target, baseOffset);
    }

    static Optional<Integer> epochOf(RecordBatch batch) {
        int epoch = batch.partitionLeaderEpoch();
        return epoch == RecordBatch.NO_PARTITION_LEADER_EPOCH ? Optional.empty() : Optional.of(epoch);
    }

    /** Removes every batch whose last offset is {@code >= offset}; returns bytes removed. */
    int truncateTo(long offset) throws IOException {
        int at = find(offset, log.sizeInBytes());
        if (at < 0) {
            return 0;
        }
        int removed = log.sizeInBytes() - at;
        log.truncateTo(at);
        log.channel().position(at);
        rebuild(false);
        if (isEmpty()) {
            rollStartMs = Long.MAX_VALUE;
        }
        return removed;
    }

    /** Lets the table of recent batches go: reads of a segment no longer appended to scan its file. */
    void forgetRecentBatches() {
        recent.release();
    }

    /** Called when this segment stops being the active one: records the final time index entry. */
    void onBecomeInactive() throws IOException {
        forgetRecentBatches();
        timeIndex.maybeAppend(maxTimestamp, offsetOfMaxTimestamp, true);
        offsetIndex.writePending();
        timeIndex.writePending();
        log.trim();
    }

    void flush() throws IOException {
        log.flush();
        offsetIndex.flush();
        timeIndex.flush();
    }

    /** Renames the three files by appending {@code suffix} (e.g. ".deleted"); channels stay open for readers. */
    void renameAll(String suffix) throws IOException {
        for (String s : FILE_SUFFIXES) {
            Path p = file(dir, baseOffset, s);
            if (Files.exists(p)) {
                Files.move(p, p.resolveSibling(p.getFileName() + suffix), StandardCopyOption.ATOMIC_MOVE);
            }
        }
    }

    /**
     * Closes the channels and deletes the files: under their plain names if {@code suffix} is null, else under
     * the names {@link #renameAll} gave them (a replacement segment may own the plain names by then).
     */
    void closeAndDelete(String suffix) throws IOException {
        closeQuietly();
        for (String s : FILE_SUFFIXES) {
            Path p = file(dir, baseOffset, s);
            Files.deleteIfExists(suffix == null ? p : p.resolveSibling(p.getFileName() + suffix));
        }
    }

    void closeQuietly() {
        closed = true;
        try {
            // a response may still be sending a range of the file: then the last one closes it
            SegmentChannels.close(log.channel(), log::closeHandlers);
        } catch (IOException ignored) {
            // closing a channel we are discarding
        }
        try {
            offsetIndex.close();
        } catch (IOException ignored) {
            // derived data
        }
        try {
            timeIndex.close();
        } catch (IOException ignored) {
            // derived data
        }
    }

    /** Records the final time index entry (so a clean reopen knows the max timestamp), fsyncs and closes. */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        // every file is closed even if a step fails (a full disk refuses the index entries still pending):
        // the first failure is thrown once all are closed
        IOException failure = null;
        if (log.channel().isOpen()) {
            try {
                timeIndex.maybeAppend(maxTimestamp, offsetOfMaxTimestamp, true);
            } catch (IOException e) {
                failure = e;
            }
            try {
                // FileRecords.close(), but a response may still be sending a range of the file: then the last one closes it
                log.flush();
                log.trim();
            } catch (IOException e) {
                failure = failure == null ? e : failure;
            }
        }
        try {
            SegmentChannels.close(log.channel(), log::closeHandlers);
        } catch (IOException e) {
            failure = failure == null ? e : failure;
        }
        try {
            offsetIndex.close();
        } catch (IOException e) {
            failure = failure == null ? e : failure;
        }
        try {
            timeIndex.close();
        } catch (IOException e) {
            failure = failure == null ? e : failure;
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return "LogSegment(base=" + baseOffset + ", size=" + log.sizeInBytes() + ")";
    }
}
