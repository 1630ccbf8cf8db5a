package dev.skein.broker.storage;

import java.util.List;

/**
 * Which segments a partition log rolls or deletes, by {@code segment.ms}, {@code retention.ms},
 * {@code retention.bytes} and the log start offset. Pure decisions over a snapshot of the segments (oldest
 * first, the last one active); {@link PartitionLog} acts on them under its lock. The active segment is never
 * chosen for deletion.
 */
final class RetentionPolicy {
    private RetentionPolicy() {
    }

    /** Whether {@code active} holds data and is older than segment.ms, so it should be rolled. */
    static boolean segmentMsElapsed(LogSegment active, LogConfig cfg, long nowMs) {
        return !active.isEmpty() && nowMs - active.rollStartMs() > cfg.segmentMs();
    }

    /**
     * Whether retention.ms applies and every non-empty segment, the active one included, is past it: the active
     * segment is then rolled so that it can be deleted too.
     */
    static boolean allExpired(List<LogSegment> segments, LogConfig cfg, long nowMs) {
        if (cfg.retentionMs() < 0) {
            return false;
        }
        for (LogSegment s : segments) {
            if (!s.isEmpty() && !expired(s, cfg, nowMs)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The oldest segments to delete under cleanup.policy=delete: first those whose newest record is older than
     * retention.ms (or that are empty), then, of the rest, the oldest while the log stays at or above
     * retention.bytes without them.
     */
    static List<LogSegment> segmentsToDelete(List<LogSegment> segments, LogConfig cfg, long nowMs) {
        if (!cfg.cleanupDelete()) {
            return List.of();
        }
        int last = segments.size() - 1;
        int n = 0;
        if (cfg.retentionMs() >= 0) {
            while (n < last && (segments.get(n).isEmpty() || expired(segments.get(n), cfg, nowMs))) {
                n++;
            }
        }
        if (cfg.retentionBytes() >= 0) {
            long diff = -cfg.retentionBytes();
            for (LogSegment s : segments.subList(n, segments.size())) {
                diff += s.size();
            }
            while (n < last && diff - segments.get(n).size() >= 0) {
                diff -= segments.get(n).size();
                n++;
            }
        }
        return segments.subList(0, n);
    }

    /** The segments wholly below {@code logStartOffset}: those whose successor starts at or below it. */
    static List<LogSegment> segmentsBelow(List<LogSegment> segments, long logStartOffset) {
        int n = 0;
        while (n + 1 < segments.size() && segments.get(n + 1).baseOffset() <= logStartOffset) {
            n++;
        }
        return segments.subList(0, n);
    }

    private static boolean expired(LogSegment s, LogConfig cfg, long nowMs) {
        return nowMs - s.maxTimestamp() > cfg.retentionMs();
    }
}
