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
        return builder().build();
    }

    /** A builder starting from {@link #defaults()}. */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this configuration. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.segmentBytes = segmentBytes;
        b.segmentMs = segmentMs;
        b.segmentIndexBytes = segmentIndexBytes;
        b.indexIntervalBytes = indexIntervalBytes;
        b.retentionMs = retentionMs;
        b.retentionBytes = retentionBytes;
        b.cleanupDelete = cleanupDelete;
        b.cleanupCompact = cleanupCompact;
        b.deleteRetentionMs = deleteRetentionMs;
        b.minCompactionLagMs = minCompactionLagMs;
        b.minCleanableDirtyRatio = minCleanableDirtyRatio;
        b.flushMessages = flushMessages;
        b.flushMs = flushMs;
        b.maxMessageBytes = maxMessageBytes;
        b.logAppendTime = logAppendTime;
        b.fileDeleteDelayMs = fileDeleteDelayMs;
        return b;
    }

    /** Builds a {@link LogConfig} one field at a time; unset fields keep Kafka's defaults. */
    public static final class Builder {
        private int segmentBytes = 1 << 30;
        private long segmentMs = 7L * 24 * 3600 * 1000;
        private int segmentIndexBytes = 10 * 1024 * 1024;
        private int indexIntervalBytes = 4096;
        private long retentionMs = 7L * 24 * 3600 * 1000;
        private long retentionBytes = -1L;
        private boolean cleanupDelete = true;
        private boolean cleanupCompact = false;
        private long deleteRetentionMs = 24L * 3600 * 1000;
        private long minCompactionLagMs = 0L;
        private double minCleanableDirtyRatio = 0.5;
        private long flushMessages = Long.MAX_VALUE;
        private long flushMs = Long.MAX_VALUE;
        private int maxMessageBytes = 1024 * 1024 + 12;
        private boolean logAppendTime = false;
        private long fileDeleteDelayMs = 60_000L;

        private Builder() {
        }

        public Builder segmentBytes(int v) {
            this.segmentBytes = v;
            return this;
        }

        public Builder segmentMs(long v) {
            this.segmentMs = v;
            return this;
        }

        public Builder segmentIndexBytes(int v) {
            this.segmentIndexBytes = v;
            return this;
        }

        public Builder indexIntervalBytes(int v) {
            this.indexIntervalBytes = v;
            return this;
        }

        public Builder retentionMs(long v) {
            this.retentionMs = v;
            return this;
        }

        public Builder retentionBytes(long v) {
            this.retentionBytes = v;
            return this;
        }

        public Builder cleanupDelete(boolean v) {
            this.cleanupDelete = v;
            return this;
        }

        public Builder cleanupCompact(boolean v) {
            this.cleanupCompact = v;
            return this;
        }

        public Builder deleteRetentionMs(long v) {
            this.deleteRetentionMs = v;
            return this;
        }

        public Builder minCompactionLagMs(long v) {
            this.minCompactionLagMs = v;
            return this;
        }

        public Builder minCleanableDirtyRatio(double v) {
            this.minCleanableDirtyRatio = v;
            return this;
        }

        public Builder flushMessages(long v) {
            this.flushMessages = v;
            return this;
        }

        public Builder flushMs(long v) {
            this.flushMs = v;
            return this;
        }

        public Builder maxMessageBytes(int v) {
            this.maxMessageBytes = v;
            return this;
        }

        public Builder logAppendTime(boolean v) {
            this.logAppendTime = v;
            return this;
        }

        public Builder fileDeleteDelayMs(long v) {
            this.fileDeleteDelayMs = v;
            return this;
        }

        public LogConfig build() {
            return new LogConfig(segmentBytes, segmentMs, segmentIndexBytes, indexIntervalBytes, retentionMs,
                    retentionBytes, cleanupDelete, cleanupCompact, deleteRetentionMs, minCompactionLagMs,
                    minCleanableDirtyRatio, flushMessages, flushMs, maxMessageBytes, logAppendTime, fileDeleteDelayMs);
        }
    }
}
