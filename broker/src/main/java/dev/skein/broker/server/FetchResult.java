package dev.skein.broker.server;

import dev.skein.broker.storage.EpochEndOffset;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Records;

/**
 * What a fetch returns for one partition; {@code divergingEpoch} (null if none) tells a follower
 * whose log diverged where the leader's log of that epoch ends.
 */
public record FetchResult(Errors error, long highWatermark, long logStartOffset, Records records,
                          EpochEndOffset divergingEpoch) {
    public FetchResult(Errors error, long highWatermark, long logStartOffset, Records records) {
        this(error, highWatermark, logStartOffset, records, null);
    }

    public static FetchResult error(Errors error) {
        return new FetchResult(error, -1, -1, MemoryRecords.EMPTY);
    }

    public int bytes() {
        return records.sizeInBytes();
    }
}
