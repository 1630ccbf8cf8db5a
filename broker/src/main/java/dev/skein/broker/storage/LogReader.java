package dev.skein.broker.storage;

import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.record.FileRecords.TimestampAndOffset;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.Records;

import java.nio.channels.ClosedChannelException;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;

/**
 * The lock-free read path of a partition log over its live segment map. A segment may be removed (and its
 * channel closed) while a read runs; a read that hits a closed channel of a segment no longer in the map goes
 * on with the next segment, so readers never see an error caused by retention, truncation or cleaning.
 */
final class LogReader {
    private LogReader() {
    }

    /**
     * Whole batches from the one containing {@code startOffset}, at most {@code maxBytes} (unless
     * {@code minOneMessage}), none with last offset {@code >= limit}; null if no segment holds such a batch.
     */
    static Records read(NavigableMap<Long, LogSegment> segments, long startOffset, int maxBytes, long limit,
                        boolean minOneMessage) {
        Long floor = segments.floorKey(startOffset);
        Map<Long, LogSegment> candidates = floor == null ? segments : segments.tailMap(floor, true);
        for (LogSegment segment : candidates.values()) {
            if (segment.baseOffset() >= limit) {
                break;
            }
            try {
                Records records = segment.read(startOffset, maxBytes, limit, minOneMessage);
                if (records != null) {
                    return records;
                }
            } catch (KafkaException e) {
                if (!(e.getCause() instanceof ClosedChannelException) || segments.get(segment.baseOffset()) == segment) {
                    throw e;
                }
                // the segment was deleted and closed under us: continue with the next one
            }
        }
        return null;
    }

    /** The first record at or after {@code logStartOffset} with timestamp >= {@code timestamp}. */
    static Optional<TimestampAndOffset> offsetForTimestamp(NavigableMap<Long, LogSegment> segments, long timestamp,
                                                           long logStartOffset) {
        for (LogSegment segment : segments.values()) {
            if (segment.nextOffset() <= logStartOffset || segment.maxTimestamp() < timestamp) {
                continue;
            }
            Optional<TimestampAndOffset> found = segment.findOffsetByTimestamp(timestamp, logStartOffset);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    /** The first record at or after {@code logStartOffset} carrying the largest timestamp in the log. */
    static Optional<TimestampAndOffset> maxTimestampAndOffset(NavigableMap<Long, LogSegment> segments, long logStartOffset) {
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
}
