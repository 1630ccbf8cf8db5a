package dev.skein.broker.storage;

/**
 * Outcome of one append to a {@link PartitionLog}.
 *
 * @param firstOffset    offset of the first record appended (or, for a duplicate, of the original append)
 * @param lastOffset     offset of the last record appended (or, for a duplicate, of the original append)
 * @param maxTimestamp   largest record timestamp in the append (the log append time under LogAppendTime)
 * @param logAppendTime  the broker time stamped into the batches, or -1 unless the topic uses LogAppendTime
 * @param logStartOffset the log start offset after the append
 * @param numRecords     number of records appended (0 for a duplicate)
 * @param duplicate      true when an idempotent producer retried a batch that is already in the log; nothing was written
 */
public record LogAppendInfo(long firstOffset, long lastOffset, long maxTimestamp, long logAppendTime,
                            long logStartOffset, int numRecords, boolean duplicate) {
}
