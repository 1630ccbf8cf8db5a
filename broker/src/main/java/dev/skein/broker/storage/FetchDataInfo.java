package dev.skein.broker.storage;

import org.apache.kafka.common.record.Records;

/**
 * Result of {@link PartitionLog#read}: whole record batches starting with the batch that contains
 * {@code fetchOffset}; empty records when there is nothing to return.
 */
public record FetchDataInfo(long fetchOffset, Records records) {
}
