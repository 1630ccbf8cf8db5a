package dev.skein.broker.storage;

/**
 * The effective, already-validated configuration of one partition's log: topic-level overrides
 * merged over the broker's {@code log.*} defaults by {@code dev.skein.broker.config.TopicConfigs}.
 * Names and meanings follow Kafka's topic configs ({@code segment.bytes}, {@code retention.ms}, ...).
 *
 * @param segmentBytes          {@code segment.bytes}: roll a segment when it would grow past this size
 * @param segmentMs             {@code segment.ms}: roll a non-empty active segment older than this
 * @param segmentIndexBytes     {@code segment.index.bytes}: maximum size of an offset or time index file
 * @param indexIntervalBytes    {@code index.interval.bytes}: bytes appended between two index entries
 * @param retentionMs           {@code retention.ms}: delete segments whose newest record is older; -1 = forever
 * @param retentionBytes        {@code retention.bytes}: delete oldest segments while the log is larger; -1 = no limit
 * @param cleanupDelete         {@code cleanup.policy} contains {@code delete}
 * @param cleanupCompact        {@code cleanup.policy} contains {@code compact}
 * @param deleteRetentionMs     {@code delete.retention.ms}: how long tombstones survive compaction
 * @param minCompactionLagMs    {@code min.compaction.lag.ms}: records younger than this are not compacted
 * @param minCleanableDirtyRatio {@code min.cleanable.dirty.ratio}
 * @param flushMessages         {@code flush.messages}: fsync after this many appended records (Long.MAX_VALUE = leave to the OS)
 * @param flushMs               {@code flush.ms}: fsync when the last flush is older than this (Long.MAX_VALUE = leave to the OS)
 * @param maxMessageBytes       {@code max.message.bytes}: largest record batch accepted (after compression)
 * @param logAppendTime         {@code message.timestamp.type=LogAppendTime}
 * @param fileDeleteDelayMs     {@code file.delete.delay.ms}
 */
public record LogConfig(
        int segmentBytes,
        long segmentMs,
        int segmentIndexBytes,
        int indexIntervalBytes,
        long retentionMs,
        long retentionBytes,
        boolean cleanupDelete,
        boolean cleanupCompact,
        long deleteRetentionMs,
        long minCompactionLagMs,
        double minCleanableDirtyRatio,
        long flushMessages,
        long flushMs,
        int maxMessageBytes,
        boolean logAppendTime,
        long fileDeleteDelayMs) {

    /** Kafka's defaults, for tests and tools that need a plain log. */
    public static LogConfig defaults() {
        return new LogConfig(1 << 30, 7L * 24 * 3600 * 1000, 10 * 1024 * 1024, 4096,
                7L * 24 * 3600 * 1000, -1L, true, false, 24L * 3600 * 1000, 0L, 0.5,
                Long.MAX_VALUE, Long.MAX_VALUE, 1024 * 1024 + 12, false, 60_000L);
    }

    public LogConfig withSegmentBytes(int v) {
        return new LogConfig(v, segmentMs, segmentIndexBytes, indexIntervalBytes, retentionMs, retentionBytes,
                cleanupDelete, cleanupCompact, deleteRetentionMs, minCompactionLagMs, minCleanableDirtyRatio,
                flushMessages, flushMs, maxMessageBytes, logAppendTime, fileDeleteDelayMs);
    }

    public LogConfig withRetention(long ms, long bytes) {
        return new LogConfig(segmentBytes, segmentMs, segmentIndexBytes, indexIntervalBytes, ms, bytes,
                cleanupDelete, cleanupCompact, deleteRetentionMs, minCompactionLagMs, minCleanableDirtyRatio,
                flushMessages, flushMs, maxMessageBytes, logAppendTime, fileDeleteDelayMs);
    }

    public LogConfig withCleanup(boolean delete, boolean compact, long deleteRetentionMs) {
        return new LogConfig(segmentBytes, segmentMs, segmentIndexBytes, indexIntervalBytes, retentionMs, retentionBytes,
                delete, compact, deleteRetentionMs, minCompactionLagMs, minCleanableDirtyRatio,
                flushMessages, flushMs, maxMessageBytes, logAppendTime, fileDeleteDelayMs);
    }

    public LogConfig withFlush(long messages, long ms) {
        return new LogConfig(segmentBytes, segmentMs, segmentIndexBytes, indexIntervalBytes, retentionMs, retentionBytes,
                cleanupDelete, cleanupCompact, deleteRetentionMs, minCompactionLagMs, minCleanableDirtyRatio,
                messages, ms, maxMessageBytes, logAppendTime, fileDeleteDelayMs);
    }

    public LogConfig withSegmentMs(long v) {
        return new LogConfig(segmentBytes, v, segmentIndexBytes, indexIntervalBytes, retentionMs, retentionBytes,
                cleanupDelete, cleanupCompact, deleteRetentionMs, minCompactionLagMs, minCleanableDirtyRatio,
                flushMessages, flushMs, maxMessageBytes, logAppendTime, fileDeleteDelayMs);
    }

    public LogConfig withIndexIntervalBytes(int v) {
        return new LogConfig(segmentBytes, segmentMs, segmentIndexBytes, v, retentionMs, retentionBytes,
                cleanupDelete, cleanupCompact, deleteRetentionMs, minCompactionLagMs, minCleanableDirtyRatio,
                flushMessages, flushMs, maxMessageBytes, logAppendTime, fileDeleteDelayMs);
    }

    public LogConfig withLogAppendTime(boolean v) {
        return new LogConfig(segmentBytes, segmentMs, segmentIndexBytes, indexIntervalBytes, retentionMs, retentionBytes,
                cleanupDelete, cleanupCompact, deleteRetentionMs, minCompactionLagMs, minCleanableDirtyRatio,
                flushMessages, flushMs, maxMessageBytes, v, fileDeleteDelayMs);
    }

    public LogConfig withCompaction(long minCompactionLagMs, double minCleanableDirtyRatio) {
        return new LogConfig(segmentBytes, segmentMs, segmentIndexBytes, indexIntervalBytes, retentionMs, retentionBytes,
                cleanupDelete, cleanupCompact, deleteRetentionMs, minCompactionLagMs, minCleanableDirtyRatio,
                flushMessages, flushMs, maxMessageBytes, logAppendTime, fileDeleteDelayMs);
    }
}
