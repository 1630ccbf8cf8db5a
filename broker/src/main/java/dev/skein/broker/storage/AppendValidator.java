package dev.skein.broker.storage;

import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.CorruptRecordException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.UnsupportedForMessageFormatException;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MutableRecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.RecordBatch;

import java.util.ArrayList;
import java.util.List;

/**
 * Checks the record batches of one append before anything is written, throwing the Kafka exception whose error
 * code the client expects: size limits, magic v2 only, CRC, no transactional or control batches, record counts
 * and offset deltas, and keys on compacted topics (leader appends).
 */
final class AppendValidator {
    private AppendValidator() {
    }

    /** Returns the batches of {@code records}, all valid; a leader append is checked more strictly than a follower's. */
    static List<MutableRecordBatch> validate(MemoryRecords records, LogConfig cfg, boolean leader, TopicPartition topicPartition) {
        if (records.sizeInBytes() > cfg.segmentBytes()) {
            throw new RecordBatchTooLargeException("Append of " + records.sizeInBytes()
                    + " bytes exceeds segment.bytes " + cfg.segmentBytes() + " for " + topicPartition);
        }
        // a produce request carries one batch per partition: that one is kept as a list of one, a list
        // that grows is made only for a second
        MutableRecordBatch first = null;
        List<MutableRecordBatch> more = null;
        long validBytes = 0;
        for (MutableRecordBatch batch : records.batches()) {
            if (batch.magic() != RecordBatch.MAGIC_VALUE_V2) {
                throw new UnsupportedForMessageFormatException("Record batch magic " + batch.magic()
                        + " is not supported; only magic v2 is accepted");
            }
            if (batch.sizeInBytes() > cfg.maxMessageBytes()) {
                throw new RecordTooLargeException("Record batch of " + batch.sizeInBytes()
                        + " bytes exceeds max.message.bytes " + cfg.maxMessageBytes() + " for " + topicPartition);
            }
            batch.ensureValid();
            if (batch.isTransactional()) {
                throw new InvalidRecordException("transactions are not supported");
            }
            if (batch.isControlBatch()) {
                throw new InvalidRecordException("control batches are not accepted from clients");
            }
            Integer count = batch.countOrNull();
            if (count == null || (leader && count < 1) || count < 0) {
                throw new InvalidRecordException("Record batch must contain at least one record");
            }
            if (leader && batch.lastOffset() - batch.baseOffset() != count - 1) {
                throw new InvalidRecordException("Record batch last offset delta " + (batch.lastOffset() - batch.baseOffset())
                        + " does not match its record count " + count);
            }
            if (!leader && batch.lastOffset() < batch.baseOffset()) {
                throw new InvalidRecordException("Record batch last offset is below its base offset");
            }
            if (leader && cfg.cleanupCompact()) {
                for (Record record : batch) {
                    if (!record.hasKey()) {
                        throw new InvalidRecordException("Compacted topic cannot accept message without key in topic partition "
                                + topicPartition);
                    }
                }
            }
            validBytes += batch.sizeInBytes();
            if (first == null) {
                first = batch;
            } else {
                if (more == null) {
                    more = new ArrayList<>();
                    more.add(first);
                }
                more.add(batch);
            }
        }
        if (validBytes != records.sizeInBytes()) {
            throw new CorruptRecordException("Append to " + topicPartition + " ends with a partial record batch ("
                    + (records.sizeInBytes() - validBytes) + " trailing bytes)");
        }
        if (first == null) {
            throw new InvalidRecordException("Append to " + topicPartition + " contains no record batches");
        }
        return more != null ? more : List.of(first);
    }
}
