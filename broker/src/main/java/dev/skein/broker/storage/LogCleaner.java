package dev.skein.broker.storage;

import org.apache.kafka.common.record.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecords.RecordFilter;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.Utils;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Log compaction for {@code cleanup.policy=compact}: keeps, among the closed segments, only the latest record
 * of each key. The broker calls {@link #clean} periodically for logs whose {@link PartitionLog#dirtyRatio()} is
 * at least {@code min.cleanable.dirty.ratio}; no thread is started here.
 *
 * <p>One pass: the dirty range runs from the cleaner checkpoint to the first uncleanable segment (the active
 * segment, or an earlier one holding records younger than {@code min.compaction.lag.ms}). A key → latest offset
 * map is built over the dirty range; then every closed segment below the uncleanable point is rewritten with
 * {@link MemoryRecords#filterTo}, dropping records superseded by a later offset of the same key and tombstones
 * whose delete horizon (stamped into the batch the first time it is cleaned: clean time + delete.retention.ms)
 * has passed. Offsets never change; batches keep their producer metadata, and the last batch of each producer is
 * kept (possibly empty) so idempotent state survives. Each rewritten segment is written to
 * {@code <base>.log.cleaned}, fsynced, and swapped in via {@code .log.swap} (recovery completes a swap it finds
 * and discards {@code .cleaned} files). Instances are not thread-safe: use one per cleaner thread.
 */
public final class LogCleaner {
    private static final int READ_CHUNK_BYTES = 1 << 20;

    /** Where a test wants the pass to stop, simulating a crash. */
    enum StopAt { NEVER, AFTER_CLEANED_FILES, AFTER_SWAP_RENAME }

    private final BufferSupplier decompressionBuffers = BufferSupplier.create();

    public CleanResult clean(PartitionLog log, long nowMs) throws IOException {
        return clean(log, nowMs, StopAt.NEVER);
    }

    CleanResult clean(PartitionLog log, long nowMs, StopAt stopAt) throws IOException {
        LogConfig cfg = log.config();
        long checkpoint = log.cleanerCheckpoint();
        if (!cfg.cleanupCompact()) {
            return CleanResult.nothing(checkpoint);
        }
        List<LogSegment> segments = log.segmentsSnapshot();
        List<LogSegment> cleanable = new ArrayList<>();
        long firstUncleanable = segments.get(segments.size() - 1).baseOffset();
        for (LogSegment s : segments.subList(0, segments.size() - 1)) {
            if (!s.isEmpty() && nowMs - s.maxTimestamp() < cfg.minCompactionLagMs()) {
                firstUncleanable = s.baseOffset();
                break;
            }
            cleanable.add(s);
        }
        List<LogSegment> dirty = cleanable.stream().filter(s -> s.baseOffset() >= checkpoint).toList();
        if (dirty.isEmpty()) {
            return CleanResult.nothing(checkpoint);
        }

        Map<ByteBuffer, Long> latestOffsetByKey = buildOffsetMap(dirty);
        Map<Long, Long> lastOffsetByProducer = new HashMap<>();
        log.producerState().activeProducers().forEach((id, e) -> lastOffsetByProducer.put(id, e.lastOffset()));
        RecordFilter filter = new CompactionFilter(nowMs, cfg.deleteRetentionMs(), latestOffsetByKey, lastOffsetByProducer);

        long bytesBefore = 0;
        long bytesAfter = 0;
        long removed = 0;
        int cleaned = 0;
        for (LogSegment segment : cleanable) {
            Path cleanedFile = LogSegment.file(log.dir(), segment.baseOffset(), LogSegment.LOG_SUFFIX + PartitionLog.CLEANED_SUFFIX);
            long[] stats = rewrite(segment, cleanedFile, filter);
            if (stopAt == StopAt.AFTER_CLEANED_FILES) {
                continue;
            }
            if (stopAt == StopAt.AFTER_SWAP_RENAME) {
                Files.move(cleanedFile, LogSegment.file(log.dir(), segment.baseOffset(),
                        LogSegment.LOG_SUFFIX + PartitionLog.SWAP_SUFFIX), StandardCopyOption.ATOMIC_MOVE);
                continue;
            }
            if (log.replaceSegment(segment, cleanedFile)) {
                bytesBefore += stats[0];
                bytesAfter += stats[1];
                removed += stats[2];
                cleaned++;
            }
        }
        if (stopAt != StopAt.NEVER) {
            return CleanResult.nothing(checkpoint);
        }
        log.updateCleanerCheckpoint(firstUncleanable);
        return new CleanResult(cleaned, bytesBefore, bytesAfter, removed, log.cleanerCheckpoint());
    }

    private Map<ByteBuffer, Long> buildOffsetMap(List<LogSegment> dirty) {
        Map<ByteBuffer, Long> map = new HashMap<>();
        for (LogSegment segment : dirty) {
            for (FileChannelRecordBatch batch : segment.records().batches()) {
                for (Record record : batch) {
                    if (record.hasKey()) {
                        map.put(copy(record.key()), record.offset());
                    }
                }
            }
        }
        return map;
    }

    private static ByteBuffer copy(ByteBuffer key) {
        byte[] bytes = new byte[key.remaining()];
        key.duplicate().get(bytes);
        return ByteBuffer.wrap(bytes);
    }

    /** Filters one segment into {@code target}; returns {bytes read, bytes written, records removed}. */
    private long[] rewrite(LogSegment segment, Path target, RecordFilter filter) throws IOException {
        long read = 0;
        long written = 0;
        long removed = 0;
        try (FileChannel out = FileChannel.open(target, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            var source = segment.records();
            int limit = source.sizeInBytes();
            int chunkStart = 0;
            int chunkEnd = 0;
            for (FileChannelRecordBatch batch : source.slice(0, limit).batches()) {
                int batchEnd = batch.position() + batch.sizeInBytes();
                if (chunkEnd > chunkStart && batchEnd - chunkStart > READ_CHUNK_BYTES) {
                    long[] r = filterChunk(source.channel(), chunkStart, chunkEnd, out, filter);
                    written += r[0];
                    removed += r[1];
                    chunkStart = chunkEnd;
                }
                chunkEnd = batchEnd;
            }
            if (chunkEnd > chunkStart) {
                long[] r = filterChunk(source.channel(), chunkStart, chunkEnd, out, filter);
                written += r[0];
                removed += r[1];
            }
            read = chunkEnd;
            out.force(true);
        }
        return new long[]{read, written, removed};
    }

    private long[] filterChunk(FileChannel in, int start, int end, FileChannel out, RecordFilter filter) throws IOException {
        ByteBuffer chunk = ByteBuffer.allocate(end - start);
        Utils.readFullyOrFail(in, chunk, start, "segment chunk");
        chunk.flip();
        MemoryRecords records = MemoryRecords.readableRecords(chunk);
        ByteBuffer output = ByteBuffer.allocate(end - start);
        MemoryRecords.FilterResult result = records.filterTo(filter, output, decompressionBuffers);
        ByteBuffer filtered = result.outputBuffer();
        filtered.flip();
        int bytes = filtered.remaining();
        while (filtered.hasRemaining()) {
            out.write(filtered);
        }
        return new long[]{bytes, result.messagesRead() - result.messagesRetained()};
    }

    private static final class CompactionFilter extends RecordFilter {
        private final Map<ByteBuffer, Long> latestOffsetByKey;
        private final Map<Long, Long> lastOffsetByProducer;

        CompactionFilter(long now, long deleteRetentionMs, Map<ByteBuffer, Long> latestOffsetByKey,
                         Map<Long, Long> lastOffsetByProducer) {
            super(now, deleteRetentionMs);
            this.latestOffsetByKey = latestOffsetByKey;
            this.lastOffsetByProducer = lastOffsetByProducer;
        }

        @Override
        protected BatchRetentionResult checkBatchRetention(RecordBatch batch) {
            boolean lastOfProducer = batch.hasProducerId()
                    && Optional.ofNullable(lastOffsetByProducer.get(batch.producerId())).orElse(-1L) == batch.lastOffset();
            return new BatchRetentionResult(lastOfProducer ? BatchRetention.RETAIN_EMPTY : BatchRetention.DELETE_EMPTY, false);
        }

        @Override
        protected boolean shouldRetainRecord(RecordBatch batch, Record record) {
            if (!record.hasKey()) {
                return false;
            }
            Long latest = latestOffsetByKey.get(record.key());
            if (latest != null && record.offset() < latest) {
                return false;
            }
            if (!record.hasValue()) {
                var horizon = batch.deleteHorizonMs();
                return horizon.isEmpty() || currentTime < horizon.getAsLong();
            }
            return true;
        }
    }
}
