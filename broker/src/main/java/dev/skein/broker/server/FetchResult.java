package dev.skein.broker.server;

import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.Records;

/** What a fetch returns for one partition. */
public record FetchResult(Errors error, long highWatermark, long logStartOffset, Records records) {
    public static FetchResult error(Errors error) {
        return new FetchResult(error, -1, -1, MemoryRecords.EMPTY);
    }

    public int bytes() {
        return records.sizeInBytes();
    }
}
