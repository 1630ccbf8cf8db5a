package dev.skein.broker.storage;

import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.TimestampType;

import java.util.List;
import java.util.Optional;

/**
 * The per-batch work of an append, on batches {@link AppendValidator} accepted, while staging producer state:
 * for a leader, recognising a producer's retried batch and stamping offsets, leader epoch and (with LogAppendTime)
 * the timestamp into the batches in place; for a follower, checking the offsets the leader assigned. Called by
 * {@link PartitionLog} under its lock; nothing is written or committed here.
 */
final class AppendBatches {
    /** The batches of one append: their last offset, largest timestamp and number of records. */
    record Summary(long lastOffset, long maxTimestamp, int numRecords) {
    }

    private AppendBatches() {
    }

    /**
     * The already-appended batch that this single-batch append retries, if any. A duplicate inside a multi-batch
     * append throws {@link OutOfOrderSequenceException}.
     */
    static Optional<ProducerStateManager.BatchMetadata> findDuplicate(List<MutableRecordBatch> batches,
                                                                     ProducerStateManager.Staged staged) {
        for (MutableRecordBatch batch : batches) {
            if (!batch.hasProducerId()) {
                continue;
            }
            Optional<ProducerStateManager.BatchMetadata> dup = staged.findDuplicate(batch);
            if (dup.isPresent()) {
                if (batches.size() != 1) {
                    throw new OutOfOrderSequenceException("Duplicate batch of producer " + batch.producerId()
                            + " inside a multi-batch append");
                }
                return dup;
            }
        }
        return Optional.empty();
    }

    /**
     * Assigns consecutive offsets from {@code firstOffset} and {@code leaderEpoch} to the batches, checking and
     * staging each producer's sequence numbers; with {@code logAppendTime} every batch gets timestamp {@code now}.
     */
    static Summary assignOffsets(List<MutableRecordBatch> batches, ProducerStateManager.Staged staged,
                                  long firstOffset, int leaderEpoch, boolean logAppendTime, long now) {
        long next = firstOffset;
        long maxTimestamp = RecordBatch.NO_TIMESTAMP;
        int numRecords = 0;
        for (MutableRecordBatch batch : batches) {
            if (batch.hasProducerId()) {
                staged.validate(batch);
            }
            int count = batch.countOrNull();
            batch.setLastOffset(next + count - 1);
            batch.setPartitionLeaderEpoch(leaderEpoch);
            if (logAppendTime) {
                batch.setMaxTimestamp(TimestampType.LOG_APPEND_TIME, now);
            }
            maxTimestamp = Math.max(maxTimestamp, batch.maxTimestamp());
            if (batch.hasProducerId()) {
                staged.update(batch, batch.maxTimestamp());
            }
            next += count;
            numRecords += count;
        }
        return new Summary(next - 1, maxTimestamp, numRecords);
    }

    /**
     * Follower append: checks that the batches' offsets start at or after {@code logEndOffset} and increase, and
     * stages producer state without sequence checks (the leader did them).
     */
    static Summary checkOffsets(List<MutableRecordBatch> batches, ProducerStateManager.Staged staged,
                                long logEndOffset, TopicPartition topicPartition) {
        long expected = logEndOffset;
        long maxTimestamp = RecordBatch.NO_TIMESTAMP;
        int numRecords = 0;
        for (MutableRecordBatch batch : batches) {
            if (batch.baseOffset() < expected) {
                throw new InvalidRecordException("Follower append for " + topicPartition + " has offset "
                        + batch.baseOffset() + " but expected at least " + expected);
            }
            expected = batch.lastOffset() + 1;
            maxTimestamp = Math.max(maxTimestamp, batch.maxTimestamp());
            numRecords += batch.countOrNull();
            if (batch.hasProducerId()) {
                staged.update(batch, batch.maxTimestamp());
            }
        }
        return new Summary(expected - 1, maxTimestamp, numRecords);
    }
}
